package records

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Documents reads and writes an instance's metadata and manifest;
// *vault.Documents has it (a run gets it through its guard).
type Documents interface {
	// Metadata returns an instance's metadata, nil when absent.
	Metadata(ctx context.Context, id string) (*vault.Metadata, error)
	// PutMetadata writes an instance's metadata.
	PutMetadata(ctx context.Context, id string, md *vault.Metadata) error
	// ReadManifest reads an instance's manifest document.
	ReadManifest(ctx context.Context, id string) (*vault.ManifestDoc, error)
	// ReplaceManifest writes an instance's manifest over the document
	// read (check-and-set: vault.ErrConflict when it changed since; over
	// a document read absent, a create, without a read).
	ReplaceManifest(ctx context.Context, id, text string, over *vault.ManifestDoc) error
	// Instances lists the instance ids that have documents under the mount
	// (metadata, manifest), so that a cold run reads nothing for the others.
	Instances(ctx context.Context) (map[string]bool, error)
}

// Backups backs an instance up before a change, and reads the record of its
// newest backup when its index entry is lost; *vault.Archive has it.
type Backups interface {
	// BackupFrom snapshots an instance's records, its metadata and
	// manifest as the run read them (docs); "" when backups are off.
	BackupFrom(ctx context.Context, id string, docs vault.InstanceDocs) (string, error)
	// LatestBackupRecord is the record kept in the newest backup, nil when none.
	LatestBackupRecord(ctx context.Context, id string) (*vault.Record, string, error)
}

// Reader reads what Vault holds of a run's instances. The first question
// about an instance the index lacks lists the store's instances once, so
// that a cold run reads nothing for instances Vault never saw; a warm run
// (every instance indexed) never asks. It is safe for concurrent use.
type Reader struct {
	docs    Documents
	backups Backups
	index   map[string]*vault.Record // as read at the start of the run
	log     *slog.Logger

	once sync.Once
	ids  map[string]bool // nil: unknown, read every instance
}

// NewReader reads docs and backups for a run whose index is as read.
func NewReader(docs Documents, backups Backups, index map[string]*vault.Record, log *slog.Logger) *Reader {
	return &Reader{docs: docs, backups: backups, index: index, log: log}
}

// Prefetch is a read of an instance's documents started beside the
// Director fetch. Whoever starts one stops it (Stop), used or not.
type Prefetch struct {
	done   chan struct{}
	cancel context.CancelFunc
	have   Current
	err    error
}

// Stop cancels a prefetch whose read nobody will use (if it is still
// going) and waits for it; a nil prefetch is fine.
func (p *Prefetch) Stop() {
	if p == nil {
		return
	}
	p.cancel()
	<-p.done
}

// Start starts reading the documents of an instance that the index does
// not hold (a cold or restore run: they must be read before they are
// written), so that the read is hidden behind the Director's latency; nil
// when the index holds the instance (its fingerprint may spare the read).
// Whether Vault may hold them at all is asked in the same goroutine, so
// that the Director fetch never waits for the run's one listing of Vault.
func (r *Reader) Start(ctx context.Context, id string) *Prefetch {
	if r.index[id] != nil {
		return nil
	}
	rctx, cancel := context.WithCancel(ctx)
	p := &Prefetch{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(p.done)
		// The run's one listing takes the run's context: stopping this read
		// must not cancel it for every other instance.
		if r.mayHold(ctx, id) { // else nothing to read: the instance is new to Vault
			p.have, p.err = r.read(rctx, id)
		}
	}()
	return p
}

// Current returns what Vault holds of instance id: what *p read when it is
// set (and then clears it: a retry reads again), else a new read.
func (r *Reader) Current(ctx context.Context, id string, p **Prefetch) (Current, error) {
	if pf := *p; pf != nil {
		*p = nil
		select {
		case <-pf.done:
			pf.cancel()
			if pf.err == nil {
				return pf.have, nil
			}
		case <-ctx.Done():
			pf.Stop()
			return Current{}, ctx.Err()
		}
	}
	return r.read(ctx, id)
}

// read reads an instance's metadata and manifest at once.
func (r *Reader) read(ctx context.Context, id string) (Current, error) {
	var have Current
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		have.Metadata, err = r.docs.Metadata(gctx, id)
		return err
	})
	g.Go(func() (err error) {
		if have.doc, err = r.docs.ReadManifest(gctx, id); err == nil {
			have.Manifest, have.HasManifest = have.doc.Text, have.doc.Exists
		}
		return err
	})
	if err := g.Wait(); err != nil {
		return Current{}, fmt.Errorf("reading records: %w", markCorrupt(err))
	}
	return have, nil
}

// mayHold is false only when the listing worked and does not name id.
func (r *Reader) mayHold(ctx context.Context, id string) bool {
	r.once.Do(func() {
		ids, err := r.docs.Instances(ctx)
		if err != nil {
			r.log.Warn("listing instances failed; reading each instance's records", "error", err)
			return
		}
		r.ids = ids
	})
	return r.ids == nil || r.ids[id]
}

// Restored is the index record kept in the newest backup of an instance
// whose index entry is lost while Vault holds its documents (have), or nil.
// An unreadable one is logged and skipped: the manifest's broker fields are
// used instead.
func (r *Reader) Restored(ctx context.Context, id string, have Current) (*vault.Record, error) {
	if r.index[id] != nil || (have.Metadata == nil && !have.HasManifest) {
		return nil, nil
	}
	rec, backup, err := r.backups.LatestBackupRecord(ctx, id)
	if errors.Is(err, vault.ErrCorrupt) {
		r.log.Warn("backup record unreadable, broker fields not restored", "instance", id, "backup", backup, "error", err)
		return nil, nil
	}
	return rec, err
}

// markCorrupt makes a corrupt document terminal: retrying cannot mend it.
func markCorrupt(err error) error {
	if errors.Is(err, vault.ErrCorrupt) || errors.Is(err, vault.ErrInvalid) {
		return retry.Terminal(err)
	}
	return err
}

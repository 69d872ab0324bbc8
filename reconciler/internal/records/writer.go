package records

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// writeTimeout bounds the writes of one instance once they have started: a
// stopping run finishes the instance in hand rather than leave it half-written.
const writeTimeout = 30 * time.Second

// Kinds of writes, as Counters hear of them.
const (
	KindIndex    = "index"
	KindMetadata = "metadata"
	KindManifest = "manifest"
	KindBackup   = "backup"
)

// Writer brings instances' records to their targets: Vault, or, in a dry
// run, the plan.
type Writer interface {
	// Write makes the writes of one instance's update (a backup first when
	// something existing changes) and records what they mean.
	Write(ctx context.Context, u *Update) error
	// Queue hands on an index change: written with others in a batch. The
	// Update the change was made of is not to be used after it (Vault's
	// writer makes it lean: Queued.lean).
	Queue(p *Queued)
	// Close writes the index changes left and waits for them.
	Close()
}

// Counters hear of the writes a run makes (the reconciler's metrics).
type Counters interface {
	// Wrote counts n writes of a kind (KindIndex, ...).
	Wrote(kind string, n int)
	// Drift counts a manifest found changed behind the broker's back.
	Drift()
}

// Index reads and changes the instance index; *vault.Indexes has it.
type Index interface {
	// Index reads every index record.
	Index(ctx context.Context) (*vault.Index, error)
	// Update applies changes, batched per shard.
	Update(ctx context.Context, changes map[string]vault.Change) (vault.UpdateResult, error)
	// UpdateOver is Update for a run that read base at its start: a shard
	// it read is written over the version read, without a read; at most
	// atOnce shards at a time (0: as Update).
	UpdateOver(ctx context.Context, changes map[string]vault.Change, base *vault.Index, atOnce int) (vault.UpdateResult, error)
}

// Shared is what both writers are given: the run's ledger, history and
// counters, and the index as read at the start of the run.
type Shared struct {
	Index map[string]*vault.Record
	// Base is the index as read at the start of the run (Index is its
	// Records), what its index changes are written over.
	Base *vault.Index
	// Shards is the index's shard count once the run grew it (0: not
	// known), by which a batch is written a part at a time.
	Shards   int
	Ledger   *memory.Ledger
	History  *memory.Historian // nil in a dry run
	Counters Counters
	// Backups is Config.Backup.Enabled.
	Backups bool
	Log     *slog.Logger
}

// VaultWriter writes to Vault. Its index batches are written in goroutines
// of its own, so that no instance waits for the index.
type VaultWriter struct {
	Shared
	docs    Documents
	backups Backups
	batch   *batcher
}

// NewVaultWriter starts the writer's index batches (at least batchSize
// changes each, see flushPolicy) with the run's retries; its writes are not
// cancelled with ctx: changes already queued are written (without retries
// once ctx has ended), so that nothing is left half-done.
func NewVaultWriter(ctx context.Context, s Shared, docs Documents, backups Backups, index Index, batchSize int,
	p memory.Policy, progress *memory.Progress) *VaultWriter {
	w := &VaultWriter{Shared: s, docs: docs, backups: backups}
	w.batch = startBatcher(ctx, index, batchSize, p, progress, s, func(p *Queued, e memory.Effect) { account(w.Shared, p, e) })
	return w
}

// Queue hands p to the batches.
func (w *VaultWriter) Queue(p *Queued) { w.batch.queue(p.lean()) }

// Close writes what is left and waits for it.
func (w *VaultWriter) Close() { w.batch.stop() }

// Write backs the instance up when something existing is about to change,
// then writes the metadata and the manifest that differ at once, records
// the history events the writes mean and counts the drift.
func (w *VaultWriter) Write(ctx context.Context, u *Update) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	id, a := u.Match.InstanceID, u.Actions
	if a.Backup && w.Backups {
		if err := w.backup(ctx, id, u.Have, w.Index[id]); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	if a.Metadata != nil {
		g.Go(func() error {
			return w.put(KindMetadata, func() error { return w.docs.PutMetadata(gctx, id, a.Metadata) })
		})
	}
	if a.Manifest {
		g.Go(func() error {
			return w.put(KindManifest, func() error { return w.putManifest(gctx, id, u.Manifest, u.Have.doc) })
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("writing records: %w", markCorrupt(err))
	}
	u.Wrote = a.Writes()
	for _, e := range a.Entries {
		if e.Action == "created" {
			// Kept in the metadata document written with it (no write of its
			// own: a cold run creates thousands); the instance view shows it.
			continue
		}
		details := map[string]string{"manifest_sha256": e.ManifestSHA256, "strategy": string(u.Match.Strategy),
			"confidence": fmt.Sprintf("%.2f", u.Match.Confidence)}
		if e.Action == "drift" {
			maps.Copy(details, a.Changed)
		}
		w.History.Add(id, vault.Event{Kind: e.Action, Deployment: u.Deployment, Message: e.Detail, Details: details})
	}
	if a.Drift {
		w.Ledger.Count(func(s *report.Summary) {
			s.Drift++
			s.AddDrifted(report.Drifted{InstanceID: id, Deployment: u.Deployment, Changed: a.Changed})
		})
		w.Counters.Drift()
		w.Log.Info("drift recorded", "instance", id, "deployment", u.Deployment)
	}
	return nil
}

// backup backs the instance up from what was read of it: its documents
// (have) and its index record as the run read it at its start (rec; nil:
// read); nothing to back up is not an error.
func (w *VaultWriter) backup(ctx context.Context, id string, have Current, rec *vault.Record) error {
	name, err := w.backups.BackupFrom(ctx, id, vault.InstanceDocs{Metadata: have.Metadata, Manifest: have.doc, Record: rec})
	if errors.Is(err, vault.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("backing up before the change: %w", err)
	}
	if name != "" {
		w.Ledger.Count(func(s *report.Summary) { s.Backups++; s.Writes++ })
		w.Counters.Wrote(KindBackup, 1)
	}
	return nil
}

// put makes one write and counts it.
func (w *VaultWriter) put(kind string, write func() error) error {
	if err := write(); err != nil {
		return err
	}
	w.Ledger.Count(func(s *report.Summary) { s.Writes++ })
	w.Counters.Wrote(kind, 1)
	return nil
}

// putManifest writes an instance's manifest over the document read (over;
// nil when Vault held no document of the instance: created, without a
// read). Over a document that changed since, it is an ErrConflict, and the
// run's retry reads and backs up again; a manifest created meanwhile is
// read, then written over.
func (w *VaultWriter) putManifest(ctx context.Context, id, text string, over *vault.ManifestDoc) error {
	if over != nil {
		return w.docs.ReplaceManifest(ctx, id, text, over)
	}
	err := w.docs.ReplaceManifest(ctx, id, text, &vault.ManifestDoc{})
	if !errors.Is(err, vault.ErrConflict) {
		return err
	}
	if over, err = w.docs.ReadManifest(ctx, id); err != nil {
		return err
	}
	return w.docs.ReplaceManifest(ctx, id, text, over)
}

// account counts what an index change did (or would do, in a dry run), and
// records an orphan flag set or cleared in the instance's history.
func account(s Shared, p *Queued, e memory.Effect) {
	s.Ledger.Count(func(sum *report.Summary) {
		if e&memory.EffectCreated != 0 {
			sum.Created++
		}
		if e&memory.EffectUpdated != 0 {
			sum.Updated++
		}
		if e&memory.EffectUnorphaned != 0 {
			sum.Unorphaned++
		}
		if e&memory.EffectOrphaned != 0 {
			sum.Orphaned++
		}
		if p.update != nil && (e != 0 || p.update.Wrote) {
			sum.InstancesSynced++
		}
	})
	s.Ledger.NoteOrphan(p.ID, e)
	switch name := s.Index[p.ID].Deployment(p.ID); {
	case e&memory.EffectOrphaned != 0:
		s.History.Add(p.ID, vault.Event{Kind: "orphaned", Deployment: name,
			Message: "the deployment is no longer listed by the Director; the records are kept"})
	case e&memory.EffectUnorphaned != 0:
		s.History.Add(p.ID, vault.Event{Kind: "unorphaned", Deployment: name, Message: "the deployment is listed again"})
	}
}

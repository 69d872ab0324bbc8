package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// writeTimeout bounds the writes of one instance once they have started: a
// stopping run finishes the instance in hand rather than leave it half-written.
const writeTimeout = 30 * time.Second

// updater is the stage that brings one matched instance's records in step:
// it reads what Vault holds of the instance (the current state, prefetched
// beside the Director fetch for an instance the index lacks), writes the
// metadata and manifest that differ (after a backup when something existing
// changes, with the broker fields of a lost index entry restored), and
// hands the instance's index change to the index writer.
type updater struct {
	store   updaterStore
	matcher *matcher                 // refines service and plan from the manifest
	index   map[string]*vault.Record // as read at the start of the run
	dryRun  bool                     // read and compare, write nothing
	force   bool                     // trust no fingerprint
	backups bool                     // Config.Backup.Enabled
	start   time.Time                // the run's start, stamped on history and records
	writer  *indexWriter
	history *historian // nil in a dry run
	stored  *storedInstances
	reads   sync.WaitGroup // prefetch goroutines, waited for before the run ends
	metrics *metrics
	state   *runState
	retry   retrier
	log     *slog.Logger
}

// updaterStore is what the updater reads and writes in Vault.
type updaterStore interface {
	Metadata
	Manifests
	Backups
}

// current is what Vault holds of an instance besides its index record.
type current struct {
	md          *vault.Metadata
	manifest    string
	hasManifest bool
}

// changes says which of an instance's records differ from what BOSH runs.
type changes struct {
	metadata, manifest, drift bool
	backup                    bool // something existing is about to change
}

// update is the updater's work on one instance: its target, and what the
// updater found in Vault and did, which the index change and the plan use.
type update struct {
	*target
	prefetched    *prefetch            // the observer's prefetch, until first used
	hadManifest   bool                 // Vault held a manifest when it was read
	changes       changes              // what differed from Vault
	metadataWrite bool                 // the metadata needs a write
	wrote         bool                 // metadata or manifest was written
	restored      *vault.Record        // broker fields found in the newest backup (index entry lost)
	entries       []vault.HistoryEntry // what the writes mean, for the history
}

// write brings one instance's metadata and manifest in step (reads first,
// writes only what differs, backs up first when something existing
// changes), with retries, then queues its index change.
func (u *updater) write(ctx context.Context, d *desired) {
	id, cur := d.match.InstanceID, u.index[d.match.InstanceID]
	t, err := d.load(u.matcher)
	w := &update{target: t, prefetched: d.prefetched}
	if err == nil && (u.force || cur == nil || cur.Fingerprint != d.fingerprint) { // else only the index record differs
		err = u.retry.do(ctx, "instance", id,
			func(ctx context.Context) error { return u.syncRecords(ctx, w, cur) })
	}
	if err != nil {
		u.state.failUnlessStopped(ctx, instanceKey(id), fmt.Errorf("instance %s (deployment %s): %w", id, d.deployment, err))
		return
	}
	u.writer.queue(u.indexChange(w))
}

// syncRecords reads the instance's metadata and manifest and writes those that differ.
func (u *updater) syncRecords(ctx context.Context, w *update, rec *vault.Record) error {
	have, err := u.current(ctx, w)
	if err != nil {
		return err
	}
	c := diff(w.target, have, rec)
	w.hadManifest = have.hasManifest
	next, entries := u.nextMetadata(w.target, have, rec, c)
	w.changes, w.metadataWrite, w.entries = c, next != nil, entries
	if rec == nil && (have.md != nil || have.hasManifest) {
		if w.restored, err = u.brokerFields(ctx, w.match.InstanceID); err != nil {
			return err
		}
	}
	if u.dryRun {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if c.backup && u.backups {
		if err := u.backup(ctx, w.match.InstanceID); err != nil {
			return err
		}
	}
	return u.putRecords(ctx, w, next, c)
}

// diff compares what Vault holds with what BOSH runs.
func diff(w *target, have current, rec *vault.Record) changes {
	c := changes{
		metadata: w.metadataDiffers(have.md),
		manifest: !have.hasManifest || have.manifest != w.manifest,
		drift:    have.hasManifest && have.manifest != w.manifest,
	}
	c.backup = (c.metadata && have.md != nil) || c.drift || (rec != nil && ownedFieldsDiffer(rec, w))
	return c
}

// nextMetadata is the metadata to write (nil when it needs no write), with
// the history entries that explain the change (also added to it).
func (u *updater) nextMetadata(w *target, have current, rec *vault.Record, c changes) (*vault.Metadata, []vault.HistoryEntry) {
	now := stamp(u.start)
	var entries []vault.HistoryEntry
	switch {
	case have.md == nil && !have.hasManifest:
		entries = append(entries, vault.HistoryEntry{Time: now, Action: "created", ManifestSHA256: w.manifestSHA,
			Detail: fmt.Sprintf("found by the reconciler (%s match, confidence %.2f)", w.match.Strategy, w.match.Confidence)})
	case rec == nil:
		entries = append(entries, vault.HistoryEntry{Time: now, Action: "restored", ManifestSHA256: w.manifestSHA,
			Detail: "index entry restored from BOSH by the reconciler"})
	}
	if c.drift {
		entries = append(entries, vault.HistoryEntry{Time: now, Action: "drift", ManifestSHA256: w.manifestSHA,
			Detail: fmt.Sprintf("manifest changed outside the broker (was sha256 %s)", sha256Hex(have.manifest))})
	} else if c.metadata && have.md != nil {
		entries = append(entries, vault.HistoryEntry{Time: now, Action: "updated", ManifestSHA256: w.manifestSHA,
			Detail: "releases, stemcells or VMs changed"})
	}
	if !c.metadata && len(entries) == 0 {
		return nil, nil
	}
	next := w.nextMetadata(have.md)
	for _, e := range entries {
		next.AddHistory(e, 0)
	}
	return next, entries
}

// backup backs the instance up; nothing to back up is not an error.
func (u *updater) backup(ctx context.Context, id string) error {
	name, err := u.store.Backup(ctx, id)
	if errors.Is(err, vault.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("backing up before the change: %w", err)
	}
	if name != "" {
		u.state.count(func(s *Summary) { s.Backups++; s.Writes++ })
		u.metrics.writes.WithLabelValues(kindBackup).Inc()
	}
	return nil
}

// putRecords writes the metadata (when next is not nil) and the manifest
// (when it changed) at once, and counts the drift.
func (u *updater) putRecords(ctx context.Context, w *update, next *vault.Metadata, c changes) error {
	id := w.match.InstanceID
	g, gctx := errgroup.WithContext(ctx)
	if next != nil {
		g.Go(func() error {
			return u.put(kindMetadata, func() error { return u.store.PutMetadata(gctx, id, next) })
		})
	}
	if c.manifest {
		g.Go(func() error {
			return u.put(kindManifest, func() error { return u.putManifest(gctx, id, w.manifest, w.hadManifest) })
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("writing records: %w", markCorrupt(err))
	}
	w.wrote = next != nil || c.manifest
	for _, e := range w.entries {
		if e.Action == "created" {
			// Kept in the metadata document written with it (no write of its
			// own: a cold run creates thousands); InstanceView shows it.
			continue
		}
		u.history.add(id, vault.Event{Kind: e.Action, Deployment: w.deployment, Message: e.Detail, Details: map[string]string{
			"manifest_sha256": e.ManifestSHA256, "strategy": string(w.match.Strategy),
			"confidence": fmt.Sprintf("%.2f", w.match.Confidence)}})
	}
	if c.drift {
		u.state.count(func(s *Summary) { s.Drift++ })
		u.metrics.drift.Inc()
		u.log.Info("drift recorded", "instance", id, "deployment", w.deployment)
	}
	return nil
}

// put makes one write and counts it.
func (u *updater) put(kind string, write func() error) error {
	if err := write(); err != nil {
		return err
	}
	u.state.count(func(s *Summary) { s.Writes++ })
	u.metrics.writes.WithLabelValues(kind).Inc()
	return nil
}

// putManifest writes an instance's manifest; one that Vault did not hold is
// created without the read that keeps a document's other keys.
func (u *updater) putManifest(ctx context.Context, id, text string, had bool) error {
	if !had {
		err := u.store.CreateManifest(ctx, id, text)
		if !errors.Is(err, vault.ErrConflict) {
			return err
		}
	}
	return u.store.PutManifest(ctx, id, text)
}

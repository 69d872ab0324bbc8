package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// writeTimeout bounds the writes of one instance once they have started: a
// stopping run finishes the instance in hand rather than leave it half-written.
const writeTimeout = 30 * time.Second

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

// write brings one instance's metadata and manifest in step (reads first,
// writes only what differs, backs up first when something existing
// changes), with retries, then queues its index change.
func (r *run) write(ctx context.Context, w *desired) {
	id, cur := w.match.InstanceID, r.index[w.match.InstanceID]
	err := w.load(r.m.matcher)
	if err == nil && (r.opts.Force || cur == nil || cur.Fingerprint != w.fingerprint) { // else only the index record differs
		err = retry.Do(ctx, r.retries(ctx), r.backoff(), r.logRetry("instance", id),
			func(ctx context.Context) error { return r.syncRecords(ctx, w, cur) })
	}
	if err != nil {
		r.failUnlessStopped(ctx, id, fmt.Errorf("instance %s (deployment %s): %w", id, w.deployment, err))
		return
	}
	r.queueIndex(r.indexChange(w))
}

// syncRecords reads the instance's metadata and manifest and writes those that differ.
func (r *run) syncRecords(ctx context.Context, w *desired, rec *vault.Record) error {
	have, err := r.current(ctx, w)
	if err != nil {
		return err
	}
	c := diff(w, have, rec)
	w.hadManifest = have.hasManifest
	next := r.nextMetadata(w, have, rec, c)
	w.changes, w.metadataWrite = c, next != nil
	if rec == nil && (have.md != nil || have.hasManifest) {
		if w.restored, err = r.brokerFields(ctx, w.match.InstanceID); err != nil {
			return err
		}
	}
	if r.opts.DryRun {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if c.backup && r.m.cfg.Backup.Enabled {
		if err := r.backup(ctx, w.match.InstanceID); err != nil {
			return err
		}
	}
	return r.putRecords(ctx, w, next, c)
}

// diff compares what Vault holds with what BOSH runs.
func diff(w *desired, have current, rec *vault.Record) changes {
	c := changes{
		metadata: w.metadataDiffers(have.md),
		manifest: !have.hasManifest || have.manifest != w.manifest,
		drift:    have.hasManifest && have.manifest != w.manifest,
	}
	c.backup = (c.metadata && have.md != nil) || c.drift || (rec != nil && ownedFieldsDiffer(rec, w))
	return c
}

// nextMetadata is the metadata to write (nil when it needs no write), with
// the history entries that explain the change.
func (r *run) nextMetadata(w *desired, have current, rec *vault.Record, c changes) *vault.Metadata {
	now := r.stamp()
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
		return nil
	}
	next := w.nextMetadata(have.md)
	for _, e := range entries {
		next.AddHistory(e, 0)
	}
	return next
}

// backup backs the instance up; nothing to back up is not an error.
func (r *run) backup(ctx context.Context, id string) error {
	name, err := r.m.opts.Store.Backup(ctx, id)
	if errors.Is(err, vault.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("backing up before the change: %w", err)
	}
	if name != "" {
		r.count(func(s *Summary) { s.Backups++; s.Writes++ })
		r.m.metrics.writes.WithLabelValues(kindBackup).Inc()
	}
	return nil
}

// putRecords writes the metadata (when next is not nil) and the manifest
// (when it changed) at once, and counts the drift.
func (r *run) putRecords(ctx context.Context, w *desired, next *vault.Metadata, c changes) error {
	id := w.match.InstanceID
	g, gctx := errgroup.WithContext(ctx)
	if next != nil {
		g.Go(func() error {
			return r.put(kindMetadata, func() error { return r.m.opts.Store.PutMetadata(gctx, id, next) })
		})
	}
	if c.manifest {
		g.Go(func() error {
			return r.put(kindManifest, func() error { return r.putManifest(gctx, id, w.manifest, w.hadManifest) })
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("writing records: %w", markCorrupt(err))
	}
	w.wrote = next != nil || c.manifest
	if c.drift {
		r.count(func(s *Summary) { s.Drift++ })
		r.m.metrics.drift.Inc()
		r.log.Info("drift recorded", "instance", id, "deployment", w.deployment)
	}
	return nil
}

// put makes one write and counts it.
func (r *run) put(kind string, write func() error) error {
	if err := write(); err != nil {
		return err
	}
	r.count(func(s *Summary) { s.Writes++ })
	r.m.metrics.writes.WithLabelValues(kind).Inc()
	return nil
}

// planRecords adds what a dry run would write for an instance to the plan;
// e is what its index change would do.
func (r *run) planRecords(w *desired, e effect) {
	item := PlanItem{InstanceID: w.match.InstanceID, Deployment: w.deployment, ServiceID: w.serviceID,
		PlanID: w.planID, Strategy: w.match.Strategy, Drift: w.changes.drift}
	if e != 0 {
		item.Records = append(item.Records, recordIndex)
	}
	if w.metadataWrite {
		item.Records = append(item.Records, recordMetadata)
	}
	if w.changes.manifest {
		item.Records = append(item.Records, recordManifest)
	}
	if len(item.Records) == 0 {
		return
	}
	if w.changes.drift {
		r.count(func(s *Summary) { s.Drift++ })
	}
	r.plan.add(item, e&effectCreated != 0, w.changes.backup && r.m.cfg.Backup.Enabled)
}

// putManifest writes an instance's manifest; one that Vault did not hold is
// created without the read that keeps a document's other keys.
func (r *run) putManifest(ctx context.Context, id, text string, had bool) error {
	if !had {
		err := r.m.opts.Store.CreateManifest(ctx, id, text)
		if !errors.Is(err, vault.ErrConflict) {
			return err
		}
	}
	return r.m.opts.Store.PutManifest(ctx, id, text)
}

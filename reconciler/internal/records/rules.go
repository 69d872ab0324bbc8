package records

import (
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// InStep says whether the index record shows the instance in step, so that
// nothing more is read: it holds the fingerprint of what the reconciler last
// wrote, no orphan flag, the deployment's name and its Director. A forced
// run trusts no fingerprint: it reads every instance's records again, so
// that a metadata or manifest document lost or changed in Vault is written
// again.
func InStep(cur *vault.Record, w *Desired, force bool) bool {
	return !force && cur != nil && cur.Fingerprint == w.Fingerprint && !cur.Orphaned &&
		cur.DeploymentName == w.Deployment && cur.Director == w.Director
}

// NeedsRead says whether an instance that is not in step needs its
// documents read (and maybe written): a forced run, no index record, or a
// fingerprint that differs; otherwise only its index record changes.
func NeedsRead(cur *vault.Record, w *Desired, force bool) bool {
	return force || cur == nil || cur.Fingerprint != w.Fingerprint
}

// Vouches says whether an index record vouches for a deployment the event
// feed says did not change and that has no cached copy (a restarted
// daemon): it names that deployment (of instance id) on that Director, is
// not orphaned, and holds the fingerprint of what the reconciler wrote.
func Vouches(rec *vault.Record, id, deployment, director string) bool {
	return rec != nil && !rec.Orphaned && rec.Fingerprint != "" && rec.Deployment(id) == deployment && rec.Director == director
}

// Current is what Vault holds of an instance besides its index record.
type Current struct {
	Metadata    *vault.Metadata
	Manifest    string
	HasManifest bool
	// doc is the manifest document as read (nil when it was not read: Vault
	// held no document of the instance), what its write and backup go over.
	doc *vault.ManifestDoc
}

// Actions are the writes that bring an instance's documents to their
// target, as Diff finds them.
type Actions struct {
	// Metadata is the metadata to write; nil: none.
	Metadata *vault.Metadata
	// Manifest says the manifest is written (none held, or another).
	Manifest bool
	// Drift says the manifest held differs: changed behind the broker's back.
	Drift bool
	// Changed says what a drift changed (DriftChanges); nil without one.
	Changed map[string]string
	// Backup says something existing is about to change: back it up first.
	Backup bool
	// Entries are what the writes mean, kept in the metadata's history and
	// recorded as history events (but "created").
	Entries []vault.HistoryEntry
}

// Writes says whether the actions write a document.
func (a Actions) Writes() bool { return a.Metadata != nil || a.Manifest }

// Diff compares what Vault holds of an instance (have, and its index record
// rec, nil when absent) with its target, at time now (RFC 3339): the
// metadata the reconciler owns (releases, stemcells, VMs) and the manifest
// are written when they differ, every other metadata field is kept, and
// the history says why (created, restored, drift, updated).
func Diff(t *Target, have Current, rec *vault.Record, now string) Actions {
	metadata := t.metadataDiffers(have.Metadata)
	a := Actions{
		Manifest: !have.HasManifest || have.Manifest != t.Manifest,
		Drift:    have.HasManifest && have.Manifest != t.Manifest,
	}
	a.Backup = (metadata && have.Metadata != nil) || a.Drift || (rec != nil && OwnedFieldsDiffer(rec, t))
	switch {
	case have.Metadata == nil && !have.HasManifest:
		a.Entries = append(a.Entries, vault.HistoryEntry{Time: now, Action: "created", ManifestSHA256: t.ManifestSHA,
			Detail: fmt.Sprintf("found by the reconciler (%s match, confidence %.2f)", t.Match.Strategy, t.Match.Confidence)})
	case rec == nil:
		a.Entries = append(a.Entries, vault.HistoryEntry{Time: now, Action: "restored", ManifestSHA256: t.ManifestSHA,
			Detail: "index entry restored from BOSH by the reconciler"})
	}
	if a.Drift {
		a.Changed = DriftChanges(have.Manifest, t.Manifest)
		a.Entries = append(a.Entries, vault.HistoryEntry{Time: now, Action: "drift", ManifestSHA256: t.ManifestSHA,
			Detail: fmt.Sprintf("manifest changed outside the broker (was sha256 %s)", SHA256Hex(have.Manifest))})
	} else if metadata && have.Metadata != nil {
		a.Entries = append(a.Entries, vault.HistoryEntry{Time: now, Action: "updated", ManifestSHA256: t.ManifestSHA,
			Detail: "releases, stemcells or VMs changed"})
	}
	if !metadata && len(a.Entries) == 0 {
		return a
	}
	a.Metadata = t.nextMetadata(have.Metadata)
	for _, e := range a.Entries {
		a.Metadata.AddHistory(e, 0)
	}
	return a
}

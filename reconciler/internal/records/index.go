package records

import (
	"cmp"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Update is one instance's way to its target: what Diff found and what was
// done, which its index change and the plan use.
type Update struct {
	*Target
	// Actions are what Diff found (zero when the documents were not read).
	Actions Actions
	// Have is what Vault held, as read (zero when not read): the backup
	// holds it, and the writes go over it with check-and-set.
	Have Current
	// Wrote says the metadata or manifest was written.
	Wrote bool
	// Restored is the record of the instance's newest backup, when its
	// index entry was lost and Vault still holds its documents.
	Restored *vault.Record
}

// Queued is an index change waiting for its batch.
type Queued struct {
	ID     string
	Change vault.Change
	eff    *memory.Effect // set by Change each time it is invoked
	update *Update        // nil for an orphan flag
}

// IndexChange is the index change of a matched instance: create the entry
// when it is missing (from the broker fields of its newest backup when
// there is one, else of its manifest), set the fields the reconciler owns,
// and un-orphan it, at time start. Every other field is kept.
func IndexChange(u *Update, start time.Time) *Queued {
	p := &Queued{ID: u.Match.InstanceID, eff: new(memory.Effect), update: u}
	now := Stamp(start)
	p.Change = func(cur *vault.Record) (*vault.Record, error) {
		*p.eff = 0
		next := cur
		if next == nil {
			next = newRecord(u, start)
			*p.eff |= memory.EffectCreated
		}
		if OwnedFieldsDiffer(next, u.Target) || next.Fingerprint != u.Fingerprint {
			setOwnedFields(next, u.Target)
			if *p.eff&memory.EffectCreated == 0 {
				*p.eff |= memory.EffectUpdated
			}
		}
		if next.Orphaned {
			next.Orphaned, next.UnorphanedAt = false, now
			*p.eff |= memory.EffectUnorphaned
		}
		if *p.eff == 0 {
			return nil, nil
		}
		next.ReconciledAt = now
		return next, nil
	}
	return p
}

// lean drops from an instance's queued change what its batch does not
// need, its documents being dealt with: the manifest, the VMs, the
// documents as read and the fetched copy (a few KB an instance), so that
// the changes waiting for a slow batch (thousands in a cold run over a
// large index) hold little more than what their index records take.
func (p *Queued) lean() *Queued {
	u := p.update
	if u == nil {
		return p
	}
	d := *u.Desired // shared with the run (claims): copied, not changed
	d.listed, d.fetched = nil, nil
	// The change reads u when its batch invokes it: u itself is made lean.
	*u = Update{Target: &Target{Desired: &d, ServiceID: u.ServiceID, PlanID: u.PlanID, props: u.props},
		Wrote: u.Wrote, Restored: u.Restored}
	return p
}

// OrphanChange flags instance id's entry orphaned at time start, checking
// again on the entry as it is when written (may says it still may be).
func OrphanChange(id string, start time.Time, may func(*vault.Record) bool) *Queued {
	p := &Queued{ID: id, eff: new(memory.Effect)}
	now := Stamp(start)
	p.Change = func(cur *vault.Record) (*vault.Record, error) {
		*p.eff = 0
		if cur == nil || cur.Orphaned || !may(cur) {
			return nil, nil
		}
		cur.Orphaned, cur.OrphanedAt = true, now
		*p.eff = memory.EffectOrphaned
		return cur, nil
	}
	return p
}

// newRecord is the index entry of an instance the index lacks: the one kept
// in its newest backup (the broker's, owned as it was), with the broker
// fields its manifest still holds where that has none; without a backup, a
// record made from the Director's content alone: adopted, owned by nobody
// until an operator confirms it.
func newRecord(u *Update, start time.Time) *vault.Record {
	next := u.Restored.Clone()
	if next == nil {
		next = &vault.Record{Created: start.Unix(), Adopted: true, AdoptedAt: Stamp(start)}
	}
	next.Orphaned, next.OrphanedAt = false, ""
	if p := u.props; p != nil {
		next.OrganizationGUID = cmp.Or(next.OrganizationGUID, p.OrganizationGUID)
		next.SpaceGUID = cmp.Or(next.SpaceGUID, p.SpaceGUID)
		if params, ok := p.Parameters.(map[string]any); ok && next.Parameters == nil {
			next.Parameters = params
		}
	}
	return next
}

// Stamp is a run's start time in RFC 3339 (UTC), as records keep it.
func Stamp(start time.Time) string { return start.UTC().Format(time.RFC3339) }

// OwnedFieldsDiffer says whether rec names another service, plan, deployment, match or Director than w.
func OwnedFieldsDiffer(rec *vault.Record, w *Target) bool {
	return (w.ServiceID != "" && rec.ServiceID != w.ServiceID) || (w.PlanID != "" && rec.PlanID != w.PlanID) ||
		rec.DeploymentName != w.Deployment || rec.MatchStrategy != string(w.Match.Strategy) ||
		rec.MatchConfidence != w.Match.Confidence || rec.MatchRule != w.Match.Rule || rec.Director != w.Director
}

// setOwnedFields sets what the reconciler owns; an id that neither the
// matcher nor the manifest could tell is left as it is.
func setOwnedFields(rec *vault.Record, w *Target) {
	if w.ServiceID != "" {
		rec.ServiceID = w.ServiceID
	}
	if w.PlanID != "" {
		rec.PlanID = w.PlanID
	}
	rec.DeploymentName, rec.Fingerprint, rec.Director = w.Deployment, w.Fingerprint, w.Director
	rec.MatchStrategy, rec.MatchConfidence, rec.MatchRule = string(w.Match.Strategy), w.Match.Confidence, w.Match.Rule
}

package reconciler

import "github.com/blacksmith-reconciler/blacksmith/vault"

// indexChange is the index change of a matched instance: create the entry
// when it is missing (from the broker fields of its newest backup when
// there is one, else of its manifest), set the fields the reconciler owns,
// and un-orphan it. Every other field is kept.
func (u *updater) indexChange(w *update) *pending {
	p := &pending{id: w.match.InstanceID, eff: new(effect), w: w}
	now := stamp(u.start)
	p.change = func(cur *vault.Record) (*vault.Record, error) {
		*p.eff = 0
		next := cur
		if next == nil {
			next = u.newRecord(w)
			*p.eff |= effectCreated
		}
		if ownedFieldsDiffer(next, w.target) || next.Fingerprint != w.fingerprint {
			setOwnedFields(next, w.target)
			if *p.eff&effectCreated == 0 {
				*p.eff |= effectUpdated
			}
		}
		if next.Orphaned {
			next.Orphaned, next.UnorphanedAt = false, now
			*p.eff |= effectUnorphaned
		}
		if *p.eff == 0 {
			return nil, nil
		}
		next.ReconciledAt = now
		return next, nil
	}
	return p
}

// ownedFieldsDiffer says whether rec names another service, plan, deployment, match or Director than w.
func ownedFieldsDiffer(rec *vault.Record, w *target) bool {
	return (w.serviceID != "" && rec.ServiceID != w.serviceID) || (w.planID != "" && rec.PlanID != w.planID) ||
		rec.DeploymentName != w.deployment || rec.MatchStrategy != string(w.match.Strategy) ||
		rec.MatchConfidence != w.match.Confidence || rec.MatchRule != w.match.Rule || rec.Director != w.director
}

// setOwnedFields sets what the reconciler owns; an id that neither the
// matcher nor the manifest could tell is left as it is.
func setOwnedFields(rec *vault.Record, w *target) {
	if w.serviceID != "" {
		rec.ServiceID = w.serviceID
	}
	if w.planID != "" {
		rec.PlanID = w.planID
	}
	rec.DeploymentName, rec.Fingerprint, rec.Director = w.deployment, w.fingerprint, w.director
	rec.MatchStrategy, rec.MatchConfidence, rec.MatchRule = string(w.match.Strategy), w.match.Confidence, w.match.Rule
}

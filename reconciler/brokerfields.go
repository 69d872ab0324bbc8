package reconciler

import (
	"cmp"
	"context"
	"errors"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// newRecord is the index entry of an instance the index lacks: the one kept
// in its newest backup, with the broker fields its manifest still holds
// where that has none.
func (u *updater) newRecord(w *update) *vault.Record {
	next := w.restored.Clone()
	if next == nil {
		next = &vault.Record{Created: u.start.Unix()}
	}
	next.Orphaned, next.OrphanedAt = false, ""
	if p := w.props; p != nil {
		next.OrganizationGUID = cmp.Or(next.OrganizationGUID, p.OrganizationGUID)
		next.SpaceGUID = cmp.Or(next.SpaceGUID, p.SpaceGUID)
		if params, ok := p.Parameters.(map[string]any); ok && next.Parameters == nil {
			next.Parameters = params
		}
	}
	return next
}

// brokerFields returns the index record kept in the instance's newest
// backup, or nil when there is none. An unreadable one is logged and
// skipped: the manifest's broker fields are used instead.
func (u *updater) brokerFields(ctx context.Context, id string) (*vault.Record, error) {
	rec, backup, err := u.store.LatestBackupRecord(ctx, id)
	if errors.Is(err, vault.ErrCorrupt) {
		u.log.Warn("backup record unreadable, broker fields not restored", "instance", id, "backup", backup, "error", err)
		return nil, nil
	}
	return rec, err
}

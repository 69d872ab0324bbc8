package reconciler

import (
	"cmp"
	"context"
	"encoding/json"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// newRecord is the index entry of an instance the index lacks: the one kept
// in its newest backup, with the broker fields its manifest still holds
// where that has none.
func (r *run) newRecord(w *desired) *vault.Record {
	next := w.restored.Clone()
	if next == nil {
		next = &vault.Record{Created: r.start.Unix()}
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

// BackupReader is optionally implemented by the Store (*vault.Store does):
// when an index entry is lost but the instance's metadata is still there,
// the updater takes the broker's fields (organization, space, parameters,
// creation time) from the instance's newest backup.
type BackupReader interface {
	// Backups lists an instance's backup ids, newest first.
	Backups(ctx context.Context, id string) ([]string, error)
	// Secret reads a document under the mount.
	Secret(ctx context.Context, path string) (map[string]any, bool, error)
}

// brokerFields returns the index record kept in the instance's newest
// backup, or nil when there is none (or the store cannot tell).
func (r *run) brokerFields(ctx context.Context, id string) (*vault.Record, error) {
	br, ok := r.m.opts.Store.(BackupReader)
	if !ok {
		return nil, nil
	}
	ids, err := br.Backups(ctx, id)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	doc, found, err := br.Secret(ctx, id+"/"+r.m.cfg.Backup.Path+"/"+ids[0])
	if err != nil || !found || doc["record"] == nil {
		return nil, err
	}
	raw, err := json.Marshal(doc["record"])
	if err != nil {
		return nil, err
	}
	var rec vault.Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		r.log.Warn("backup record unreadable, broker fields not restored", "instance", id, "backup", ids[0], "error", err)
		return nil, nil
	}
	return &rec, nil
}

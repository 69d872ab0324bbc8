package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// ErrNotAdopted is returned by Adopt for an instance whose record is the
// broker's already (owned): there is nothing to confirm.
var ErrNotAdopted = errors.New("the instance's record is not an adoption awaiting confirmation")

// Adopt confirms the adoption of instance id: the record the reconciler
// made of a deployment it found on a Director becomes the broker's own. From
// then on it names its deployment and Director for good (what a Director
// lists never moves it), the broker binds, updates and deletes it like any
// instance, and it counts against its plan's and service's limits. by
// names who confirmed it in the instance's history. An unknown instance is
// vault.ErrNotFound; an owned one ErrNotAdopted.
func (m *Manager) Adopt(ctx context.Context, id, by string) (*vault.Record, error) {
	now := m.now().UTC()
	var confirmed *vault.Record
	_, err := m.stores.index.Update(ctx, map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
		switch {
		case cur == nil:
			return nil, fmt.Errorf("%w: instance %s has no record", vault.ErrNotFound, id)
		case !cur.Adopted:
			return nil, fmt.Errorf("%w: instance %s", ErrNotAdopted, id)
		}
		cur.Adopted, cur.AdoptionConfirmedAt = false, now.Format(time.RFC3339)
		confirmed = cur.Clone()
		return cur, nil
	}})
	if err != nil {
		return nil, err
	}
	if by == "" {
		by = "operator"
	}
	if err := m.stores.history.AppendEvent(ctx, id, vault.Event{Time: now, Kind: "adopted", Actor: by,
		Deployment: confirmed.Deployment(id),
		Message:    "adoption confirmed: the instance is the broker's own from now on (its deployment and Director are kept for good)",
		Details:    map[string]string{"director": confirmed.Director, "adopted_at": confirmed.AdoptedAt}}); err != nil {
		m.log.Warn("could not record a history event", "instance", id, "kind", "adopted", "error", err)
	}
	m.log.Info("adoption confirmed", "instance", id, "deployment", confirmed.Deployment(id), "by", by)
	return confirmed, nil
}

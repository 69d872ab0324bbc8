package reconciler

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// MaxAllowance bounds how long an allowance lasts.
const MaxAllowance = 7 * 24 * time.Hour

// AllowChanges records an operator's say that instance id's operations
// (the broker's update, bind and unbind, a fleet upgrade) may make guarded
// changes of classes until `lasting` from now (at most MaxAllowance): the
// change guard lets them through and each operation's history names the
// changes it let through. by names the operator in the instance's history.
// An unknown instance is vault.ErrNotFound.
func (m *Manager) AllowChanges(ctx context.Context, id string, classes []operation.Class, lasting time.Duration, by string) (vault.Allowance, error) {
	if lasting <= 0 || lasting > MaxAllowance {
		return vault.Allowance{}, fmt.Errorf("%w: an allowance lasts more than 0 and at most %s, not %s", vault.ErrInvalid, MaxAllowance, lasting)
	}
	rec, err := m.stores.records.Record(ctx, id)
	switch {
	case err != nil:
		return vault.Allowance{}, err
	case rec == nil:
		return vault.Allowance{}, fmt.Errorf("%w: instance %s has no record", vault.ErrNotFound, id)
	}
	if by == "" {
		by = "operator"
	}
	now := m.now().UTC()
	a := vault.Allowance{By: by, At: now.Format(time.RFC3339), Until: now.Add(lasting).Format(time.RFC3339)}
	for _, c := range classes {
		if !c.IsGuarded() {
			return vault.Allowance{}, fmt.Errorf("%w: %q is not a class of guarded change", vault.ErrInvalid, c)
		}
		a.Classes = append(a.Classes, string(c))
	}
	if err := m.stores.allowances.PutAllowance(ctx, id, a); err != nil {
		return vault.Allowance{}, err
	}
	if err := m.stores.history.AppendEvent(ctx, id, vault.Event{Time: now, Kind: "changes_allowed", Actor: by,
		Deployment: rec.Deployment(id),
		Message:    "guarded changes allowed until " + a.Until + ": " + strings.Join(a.Classes, ", "),
		Details:    map[string]string{"classes": strings.Join(a.Classes, ","), "until": a.Until}}); err != nil {
		m.log.Warn("could not record a history event", "instance", id, "kind", "changes_allowed", "error", err)
	}
	m.log.Info("guarded changes allowed", "instance", id, "classes", a.Classes, "until", a.Until, "by", by)
	return a, nil
}

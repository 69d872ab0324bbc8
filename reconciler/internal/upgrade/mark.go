package upgrade

import (
	"context"

	"github.com/blacksmith-reconciler/blacksmith/operation"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// marker writes what an upgrade changes of its instance's record (its
// operation, the version) and of the journal.
type marker struct {
	records Records
	journal *Journal
	hold    func(ctx context.Context, id string) (context.Context, func(), error)
	log     interface {
		Warn(msg string, args ...any)
	}
}

// mark is the Upgrader's marker.
func (u *Upgrader) mark() marker {
	return marker{records: u.Records, journal: u.Journal, hold: u.hold, log: u.Log}
}

// unmark puts the record's operation back as it was before the upgrade,
// while it still is the upgrade's.
func (m marker) unmark(ctx context.Context, up *upgrade) {
	if err := m.finishOp(ctx, up, nil); err != nil {
		m.log.Warn("could not put the instance's operation back; the reconciler settles it", "instance", up.InstanceID, "error", err)
	}
}

// finishOp puts the record's operation back as it was before the upgrade
// and applies f, while the operation still is the upgrade's (another one
// started since is left alone), under the instance's hold.
func (m marker) finishOp(ctx context.Context, up *upgrade, f func(*vault.Record)) error {
	hctx, release, err := m.hold(ctx, up.InstanceID)
	if err != nil {
		return err
	}
	defer release()
	return operation.ChangeOp(hctx, m.records, up.InstanceID, up.ContextID, func(next *vault.Record) {
		next.LastOperation = up.Previous
		if f != nil {
			f(next)
		}
	})
}

// setOp changes the upgrade's operation in the record, while it is its.
func (m marker) setOp(ctx context.Context, up *upgrade, f func(*vault.Operation)) error {
	return operation.ChangeOp(ctx, m.records, up.InstanceID, up.ContextID, func(next *vault.Record) { f(next.LastOperation) })
}

// end takes the upgrade out of the journal (quarantining the instance when
// it failed).
func (m marker) end(ctx context.Context, up *upgrade, state, reason string) {
	if err := m.journal.End(ctx, up.InstanceID, up.To, state, reason); err != nil {
		m.log.Warn("could not write the upgrade journal", "instance", up.InstanceID, "error", err)
	}
}

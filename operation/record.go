package operation

import (
	"context"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Records changes index records by check-and-set; *vault.Store has it.
type Records interface {
	Update(ctx context.Context, changes map[string]vault.Change) (vault.UpdateResult, error)
}

// ChangeOp changes instance id's record with f while its last operation
// still is the one with contextID: an operation started since (by another
// broker, an operator, a fleet upgrade) is left alone, and so is a record
// that is gone. It is how every operation marks its progress and settles
// its outcome (the broker's and the fleet upgrade's alike).
func ChangeOp(ctx context.Context, r Records, id, contextID string, f func(next *vault.Record)) error {
	_, err := r.Update(ctx, map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
		if cur == nil || cur.LastOperation == nil || cur.LastOperation.ContextID != contextID {
			return nil, nil
		}
		next := cur.Clone()
		f(next)
		return next, nil
	}})
	return err
}

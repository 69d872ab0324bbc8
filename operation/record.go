package operation

import (
	"context"
	"errors"

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

// ErrRaced is a record whose operation changed between its read and a
// Mark: another operation took the instance meanwhile.
var ErrRaced = errors.New("the instance's record changed meanwhile")

// SameOperation says whether cur still has the operation read had when it
// was read: both none, or the same context id in the same state (a record
// made or gone since is not).
func SameOperation(cur, read *vault.Record) bool {
	if cur == nil || read == nil {
		return cur == nil && read == nil
	}
	a, b := cur.LastOperation, read.LastOperation
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.ContextID == b.ContextID && a.State == b.State
}

// Mark writes next(cur) as instance id's record by check-and-set, provided
// its operation still is the one read had (SameOperation): ErrRaced
// otherwise. It is how an operation takes the instance (its operation
// marked in progress) and how one that deploys nothing records what it
// did, the broker's and the fleet upgrade's alike.
func Mark(ctx context.Context, r Records, id string, read *vault.Record, next func(cur *vault.Record) *vault.Record) error {
	_, err := r.Update(ctx, map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
		if !SameOperation(cur, read) {
			return nil, ErrRaced
		}
		return next(cur), nil
	}})
	return err
}

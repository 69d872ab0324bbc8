package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Allowance is an operator's say that the next operations of one instance
// may make guarded changes of the named classes (operation.Guarded:
// "network", "az", ...) until Until. It lives at {id}/allowance: backed up
// with the instance, and of no effect once Until has passed.
type Allowance struct {
	Classes []string `json:"classes"`
	By      string   `json:"by"`
	At      string   `json:"at"`    // RFC 3339
	Until   string   `json:"until"` // RFC 3339
}

// allowancePath is where an instance's allowance lives.
func allowancePath(id string) string { return id + "/allowance" }

// maxAllowanceClasses bounds the classes of one allowance.
const maxAllowanceClasses = 32

// PutAllowance writes id's allowance, replacing any.
func (ds *Documents) PutAllowance(ctx context.Context, id string, a Allowance) error {
	if err := validID(id); err != nil {
		return err
	}
	if len(a.Classes) == 0 || len(a.Classes) > maxAllowanceClasses {
		return fmt.Errorf("%w: an allowance names 1 to %d classes, not %d", ErrInvalid, maxAllowanceClasses, len(a.Classes))
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	var data map[string]any
	if err := json.Unmarshal(raw, &data); err != nil {
		return err
	}
	return ds.secrets.PutSecret(ctx, allowancePath(id), data)
}

// AllowedNow is the classes id's allowance allows at now: nil when it has
// none, or it expired. An allowance that does not decode allows nothing
// (and is an error naming it).
func (ds *Documents) AllowedNow(ctx context.Context, id string, now time.Time) ([]string, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	data, ok, err := ds.secrets.Secret(ctx, allowancePath(id))
	if err != nil || !ok {
		return nil, err
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	var a Allowance
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("the allowance of %s: %w: %v", id, ErrCorrupt, err)
	}
	until, err := time.Parse(time.RFC3339, a.Until)
	if err != nil {
		return nil, fmt.Errorf("the allowance of %s: %w: its until %q", id, ErrCorrupt, a.Until)
	}
	if !now.Before(until) || len(a.Classes) > maxAllowanceClasses {
		return nil, nil
	}
	return slices.Clone(a.Classes), nil
}

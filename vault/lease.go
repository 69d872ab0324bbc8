package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Leases keeps named leases (one holder at a time until it expires) under
// blacksmith/leases/, on KV v2 only (check-and-set). A Store has them
// (Store.Leases).
type Leases struct {
	kv *kv
}

var (
	// ErrLeaseHeld means another holder has the lease and it has not expired
	// (or another holder took it at the same moment). It is returned
	// wrapped in a *LeaseHeldError that names the holder.
	ErrLeaseHeld = errors.New("lease held by another")
	// ErrNoCAS means the mount is KV v1: a lease needs check-and-set.
	ErrNoCAS = errors.New("leases need a KV v2 mount (check-and-set)")
)

// leaseRoot is where leases live, under the package's own folder.
const leaseRoot = "blacksmith/leases/"

// validLeaseName is what a lease name may be.
var validLeaseName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// Lease is a named lease in Vault: one holder at a time, until it expires.
type Lease struct {
	// Holder is who holds it.
	Holder string `json:"holder"`
	// Since is when the holder took it (renewals keep it).
	Since time.Time `json:"since"`
	// Expires is when it ends unless renewed.
	Expires time.Time `json:"expires"`
	// Token is the lease document's version after the holder's last write:
	// it grows with every take and renewal, so a write made under an older
	// token is known stale (fencing).
	Token int `json:"-"`
}

// LeaseHeldError names the holder of a lease another holder wanted.
type LeaseHeldError struct {
	Holder  string
	Expires time.Time
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("%v: %s holds it until %s", ErrLeaseHeld, e.Holder, e.Expires.UTC().Format(time.RFC3339))
}

// Unwrap makes it match ErrLeaseHeld.
func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// AcquireLease takes lease name for holder until now+ttl, or renews it when
// holder has it already. Another holder's unexpired lease is a
// *LeaseHeldError; so is losing a race for it (the write is a check-and-set
// on the version read). KV v1 is ErrNoCAS.
func (l *Leases) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration, now time.Time) (Lease, error) {
	if err := l.leaseArgs(name, holder); err != nil {
		return Lease{}, err
	}
	if ttl <= 0 {
		return Lease{}, fmt.Errorf("%w: lease ttl %s", ErrInvalid, ttl)
	}
	p := leaseRoot + name
	cur, version, err := l.readLease(ctx, p)
	if err != nil {
		return Lease{}, err
	}
	next := Lease{Holder: holder, Since: now.UTC(), Expires: now.Add(ttl).UTC()}
	switch {
	case cur == nil || !now.Before(cur.Expires) || cur.Holder == "":
	case cur.Holder == holder:
		next.Since = cur.Since
	default:
		return Lease{}, &LeaseHeldError{Holder: cur.Holder, Expires: cur.Expires}
	}
	if err := l.kv.write(ctx, p, next, version); err != nil {
		if errors.Is(err, ErrConflict) {
			held, now, rerr := l.readLease(ctx, p)
			if rerr == nil && held != nil && held.Holder == holder && held.Since.Equal(next.Since) && held.Expires.Equal(next.Expires) {
				// This very write landed: its first try was committed as the
				// active node went away, and its retry found its own version.
				next.Token = now
				return next, nil
			}
			if rerr == nil && held != nil {
				return Lease{}, &LeaseHeldError{Holder: held.Holder, Expires: held.Expires}
			}
			return Lease{}, &LeaseHeldError{Holder: "another holder"}
		}
		return Lease{}, fmt.Errorf("writing lease %s: %w", name, err)
	}
	next.Token = version + 1
	return next, nil
}

// ReleaseLease gives lease name up when holder has it (a check-and-set: a
// lease taken over meanwhile is left to its new holder).
func (l *Leases) ReleaseLease(ctx context.Context, name, holder string) error {
	if err := l.leaseArgs(name, holder); err != nil {
		return err
	}
	p := leaseRoot + name
	cur, version, err := l.readLease(ctx, p)
	if err != nil || cur == nil || cur.Holder != holder {
		return err
	}
	err = l.kv.write(ctx, p, Lease{Since: cur.Since, Expires: time.Unix(0, 0).UTC()}, version)
	if err != nil && !errors.Is(err, ErrConflict) {
		return fmt.Errorf("releasing lease %s: %w", name, err)
	}
	return nil
}

// ReadLease returns lease name as it is (its holder may be "" after a
// release, or its time past); false when it was never taken.
func (l *Leases) ReadLease(ctx context.Context, name string) (Lease, bool, error) {
	if !validLeaseName.MatchString(name) {
		return Lease{}, false, fmt.Errorf("%w: lease name %q", ErrInvalid, name)
	}
	cur, version, err := l.readLease(ctx, leaseRoot+name)
	if err != nil || cur == nil {
		return Lease{}, false, err
	}
	cur.Token = version
	return *cur, true, nil
}

// DeleteLease removes lease name's document when holder has it, or it is
// released or expired at now: the lease of an instance that is gone, so
// that the documents do not outlive the instances. Another holder's
// unexpired lease is left as it is (*LeaseHeldError). KV offers no
// conditional delete: a holder that took the lease between the read and the
// delete loses it, and finds so at its next renewal.
func (l *Leases) DeleteLease(ctx context.Context, name, holder string, now time.Time) error {
	if err := l.leaseArgs(name, holder); err != nil {
		return err
	}
	p := leaseRoot + name
	cur, _, err := l.readLease(ctx, p)
	switch {
	case err != nil || cur == nil:
		return err
	case cur.Holder != holder && cur.Holder != "" && now.Before(cur.Expires):
		return &LeaseHeldError{Holder: cur.Holder, Expires: cur.Expires}
	}
	if err := l.kv.remove(ctx, p); err != nil {
		return fmt.Errorf("deleting lease %s: %w", name, err)
	}
	return nil
}

// readLease reads the lease document at p and its version (0: none).
func (l *Leases) readLease(ctx context.Context, p string) (*Lease, int, error) {
	doc, err := l.kv.read(ctx, p)
	if err != nil {
		return nil, 0, err
	}
	if !doc.Exists {
		return nil, doc.Version, nil
	}
	raw, err := bounded(l.kv.display(p), doc.Data, 4<<10)
	if err != nil {
		return nil, 0, err
	}
	var got Lease
	if err := json.Unmarshal(raw, &got); err != nil {
		return nil, 0, fmt.Errorf("lease at %s: %w: %v", l.kv.display(p), ErrCorrupt, err)
	}
	return &got, doc.Version, nil
}

// leaseArgs checks a lease's name and holder, and that the mount can CAS.
func (l *Leases) leaseArgs(name, holder string) error {
	if !validLeaseName.MatchString(name) {
		return fmt.Errorf("%w: lease name %q", ErrInvalid, name)
	}
	if holder == "" || len(holder) > 256 || !printable(holder) {
		return fmt.Errorf("%w: lease holder %q", ErrInvalid, holder)
	}
	if l.kv.version != 2 {
		return ErrNoCAS
	}
	return nil
}

package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/lease"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// ErrNotLeader is returned by Trigger on a daemon that does not hold the
// reconciler lease: another daemon runs the reconciler (see Status).
var ErrNotLeader = errors.New("another daemon leads the reconciler")

// leaseName is the reconciler's lease in Vault.
const leaseName = "reconciler"

// HAOptions makes the Manager one of several daemons sharing a Vault mount:
// only the holder of the lease runs the reconciler.
type HAOptions struct {
	// Leases keeps the lease. Required.
	Leases lease.Store
	// ID names this daemon (unique among them). Required.
	ID string
	// TTL is how long the lease lasts unless renewed (every TTL/3); a dead
	// leader is replaced within it. Default 30s.
	TTL time.Duration
}

// NotLeaderError names the daemon that leads.
type NotLeaderError struct {
	Leader string
	Since  time.Time
}

func (e *NotLeaderError) Error() string {
	return fmt.Sprintf("%v: %s (since %s)", ErrNotLeader, e.Leader, e.Since.UTC().Format(time.RFC3339))
}

// Unwrap makes it match ErrNotLeader.
func (e *NotLeaderError) Unwrap() error { return ErrNotLeader }

// elector campaigns for the lease for this daemon: it takes it when free,
// renews it every TTL/3 and says whether the daemon leads, on the monotonic
// clock (lease.Holder).
type elector struct {
	h        *lease.Holder
	ttl      time.Duration
	log      *slog.Logger
	onLead   func()                // called when this daemon becomes the leader
	onFollow func(context.Context) // called at each attempt while another daemon leads

	mu      sync.Mutex
	held    bool // as Vault last answered: taken or renewed (true), held by another (false)
	serving bool // Serve keeps the lease
}

func newElector(o HAOptions, log *slog.Logger, now func() time.Time, onLead func()) *elector {
	if o.TTL <= 0 {
		o.TTL = 30 * time.Second
	}
	return &elector{h: lease.New(o.Leases, leaseName, o.ID, o.TTL, now, log), ttl: o.TTL, log: log, onLead: onLead}
}

// Serve keeps trying to take or renew the lease until ctx ends, then
// releases it (at once: another daemon may lead without waiting the TTL).
// Serving it twice at once is ErrAlreadyStarted.
func (e *elector) Serve(ctx context.Context) error {
	e.mu.Lock()
	if e.serving {
		e.mu.Unlock()
		return ErrAlreadyStarted
	}
	e.serving = true
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.serving = false
		e.mu.Unlock()
	}()
	tick := time.NewTicker(e.ttl / 3)
	defer tick.Stop()
	for {
		e.attempt(ctx)
		select {
		case <-ctx.Done():
			e.release()
			return nil
		case <-tick.C:
		}
	}
}

// isServing says whether Serve keeps the lease.
func (e *elector) isServing() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.serving
}

// attempt takes or renews the lease once.
func (e *elector) attempt(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, e.ttl/3)
	defer cancel()
	err := e.h.Acquire(actx)
	e.mu.Lock()
	was := e.held
	switch {
	case err == nil:
		e.held = true
	case errors.Is(err, vault.ErrLeaseHeld):
		e.held = false
	}
	e.mu.Unlock()
	switch {
	case errors.Is(err, vault.ErrLeaseHeld):
		e.h.Refresh(actx) // who leads, since when
	case err != nil: // Vault unreachable: still the leader until the lease runs out
		e.log.Warn("could not renew or take the reconciler lease", "error", err)
	}
	leads := e.h.Holds()
	if leads && !was {
		e.log.Info("this daemon leads the reconciler now", "id", e.id(), "lease_ttl", e.ttl)
		if e.onLead != nil {
			e.onLead()
		}
	}
	if was && !leads {
		e.log.Warn("this daemon no longer leads the reconciler", "id", e.id(), "leader", e.h.Seen().Holder)
	}
	if !leads && e.onFollow != nil {
		e.onFollow(actx)
	}
}

// id is this daemon's name in the lease.
func (e *elector) id() string { return e.h.ID() }

// release gives the lease up (on shutdown).
func (e *elector) release() {
	e.mu.Lock()
	e.held = false
	e.mu.Unlock()
	released, err := e.h.Release()
	if err != nil {
		e.log.Warn("could not release the reconciler lease; another daemon takes it when it expires", "error", err)
		return
	}
	if released {
		e.log.Info("reconciler lease released", "id", e.id())
	}
}

// leading says whether this daemon holds a lease that has not run out.
func (e *elector) leading() bool {
	if e == nil {
		return true
	}
	return e.h.Holds()
}

// leader is who leads as this daemon last saw it.
func (e *elector) leader() (id string, since time.Time) {
	l := e.h.Seen()
	return l.Holder, l.Since
}

// fence is the error of a write this daemon may not make: nil while it leads.
func (e *elector) fence() error {
	if e.leading() {
		return nil
	}
	return ErrLostLease
}

// holdLease makes sure this daemon leads while the caller writes outside a
// scheduled run (RunOnce, Rollback, RebuildIndex). Without HA it does
// nothing. In the daemon (the lease's part served) it answers
// NotLeaderError unless this daemon leads: the elector keeps the lease. In a command that
// runs once it takes the lease itself, renews it until release, and answers
// NotLeaderError naming the daemon that holds it.
func (m *Manager) holdLease(ctx context.Context) (release func(), err error) {
	e := m.elector
	if e == nil || e.leading() {
		return func() {}, nil
	}
	started := e.isServing()
	if !started {
		e.attempt(ctx)
	}
	if !e.leading() {
		id, since := e.leader()
		return nil, &NotLeaderError{Leader: id, Since: since}
	}
	if started {
		return func() {}, nil
	}
	e.h.Keep(ctx)
	return e.release, nil
}

package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// ErrNotLeader is returned by Trigger on a daemon that does not hold the
// reconciler lease: another daemon runs the reconciler (see Status).
var ErrNotLeader = errors.New("another daemon leads the reconciler")

// leaseName is the reconciler's lease in Vault.
const leaseName = "reconciler"

// Leases takes, renews and releases the reconciler's lease; *vault.Store
// has it (KV v2 only).
type Leases interface {
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration, now time.Time) (vault.Lease, error)
	ReleaseLease(ctx context.Context, name, holder string) error
	ReadLease(ctx context.Context, name string) (vault.Lease, bool, error)
}

// HAOptions makes the Manager one of several daemons sharing a Vault mount:
// only the holder of the lease runs the reconciler.
type HAOptions struct {
	// Leases keeps the lease. Required.
	Leases Leases
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

// elector holds the lease for this daemon: it takes it when free, renews
// it every TTL/3 and says whether the daemon leads. Leading is judged on the
// monotonic clock: the lease counts from before the request that took or
// renewed it, minus a margin, so a daemon paused past its lease (SIGSTOP,
// a long GC) knows it lost it the moment it runs again, whatever Vault
// says later.
type elector struct {
	o        HAOptions
	log      *slog.Logger
	now      func() time.Time
	onLead   func()                // called when this daemon becomes the leader
	onFollow func(context.Context) // called at each attempt while another daemon leads

	mu         sync.Mutex
	leads      bool
	validUntil time.Time // monotonic
	seen       vault.Lease
}

func newElector(o HAOptions, log *slog.Logger, now func() time.Time, onLead func()) *elector {
	if o.TTL <= 0 {
		o.TTL = 30 * time.Second
	}
	return &elector{o: o, log: log, now: now, onLead: onLead}
}

// run keeps trying to take or renew the lease until ctx ends, then
// releases it (at once: another daemon may lead without waiting the TTL).
func (e *elector) run(ctx context.Context) {
	tick := time.NewTicker(e.o.TTL / 3)
	defer tick.Stop()
	for {
		e.attempt(ctx)
		select {
		case <-ctx.Done():
			e.release()
			return
		case <-tick.C:
		}
	}
}

// attempt takes or renews the lease once.
func (e *elector) attempt(ctx context.Context) {
	asked := time.Now() // monotonic: the lease counts from before the request
	actx, cancel := context.WithTimeout(ctx, e.o.TTL/3)
	defer cancel()
	l, err := e.o.Leases.AcquireLease(actx, leaseName, e.o.ID, e.o.TTL, e.now())
	e.mu.Lock()
	was := e.leads
	switch {
	case err == nil:
		e.leads, e.validUntil, e.seen = true, asked.Add(e.o.TTL-e.o.TTL/6), l
	case errors.Is(err, vault.ErrLeaseHeld):
		e.leads = false
		var held *vault.LeaseHeldError
		if errors.As(err, &held) {
			e.seen = vault.Lease{Holder: held.Holder, Expires: held.Expires}
			if cur, ok, rerr := e.o.Leases.ReadLease(actx, leaseName); rerr == nil && ok {
				e.seen = cur
			}
		}
	default: // Vault unreachable: still the leader until the lease runs out
		e.log.Warn("could not renew or take the reconciler lease", "error", err)
	}
	leads := e.leads && time.Now().Before(e.validUntil)
	e.mu.Unlock()
	if leads && !was {
		e.log.Info("this daemon leads the reconciler now", "id", e.o.ID, "lease_ttl", e.o.TTL)
		if e.onLead != nil {
			e.onLead()
		}
	}
	if was && !leads {
		e.log.Warn("this daemon no longer leads the reconciler", "id", e.o.ID, "leader", e.seen.Holder)
	}
	if !leads && e.onFollow != nil {
		e.onFollow(actx)
	}
}

// release gives the lease up (on shutdown).
func (e *elector) release() {
	e.mu.Lock()
	leads := e.leads
	e.leads = false
	e.mu.Unlock()
	if !leads {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.o.Leases.ReleaseLease(ctx, leaseName, e.o.ID); err != nil {
		e.log.Warn("could not release the reconciler lease; another daemon takes it when it expires", "error", err)
		return
	}
	e.log.Info("reconciler lease released", "id", e.o.ID)
}

// leads says whether this daemon holds a lease that has not run out.
func (e *elector) leading() bool {
	if e == nil {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leads && time.Now().Before(e.validUntil)
}

// leader is who leads as this daemon last saw it.
func (e *elector) leader() (id string, since time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen.Holder, e.seen.Since
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
// nothing. In the daemon (Start running) it answers NotLeaderError unless
// this daemon leads: the leader's elector keeps the lease. In a command that
// runs once it takes the lease itself, renews it until release, and answers
// NotLeaderError naming the daemon that holds it.
func (m *Manager) holdLease(ctx context.Context) (release func(), err error) {
	e := m.elector
	if e == nil || e.leading() {
		return func() {}, nil
	}
	started := m.queue.isStarted()
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
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(e.o.TTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				e.release()
				return
			case <-tick.C:
				e.attempt(context.WithoutCancel(ctx))
			}
		}
	}()
	return func() { close(stop); <-done }, nil
}

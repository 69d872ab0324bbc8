package lease

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Store takes, renews, reads and releases leases; *vault.Leases has it
// (KV v2 only).
type Store interface {
	// AcquireLease takes lease name for holder until now+ttl, or renews it.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration, now time.Time) (vault.Lease, error)
	// ReleaseLease gives lease name up when holder has it.
	ReleaseLease(ctx context.Context, name, holder string) error
	// ReadLease reads lease name; false when there is none.
	ReadLease(ctx context.Context, name string) (vault.Lease, bool, error)
	// DeleteLease removes lease name's document when holder has it (or
	// nobody does).
	DeleteLease(ctx context.Context, name, holder string, now time.Time) error
}

// callTimeout bounds a renewal or a release, which are made even when the
// caller's context has ended.
const callTimeout = 5 * time.Second

// waitBackoff spaces the attempts to take a lease another daemon holds.
var waitBackoff = retry.Backoff{Base: 25 * time.Millisecond, Limit: 250 * time.Millisecond}

// Holder holds one lease for one holder. It is safe for concurrent use.
type Holder struct {
	store Store
	name  string
	id    string
	ttl   time.Duration
	now   func() time.Time
	log   *slog.Logger

	mu    sync.Mutex
	held  bool
	until time.Time     // monotonic: when the lease runs out for this daemon
	seen  vault.Lease   // ours once taken, else the holder's as last seen
	keep  *keeper       // the renewals under way, nil when none
	lost  chan struct{} // closed by the renewals that found the lease taken over
}

// New is a Holder of lease name for holder id, lasting ttl unless renewed;
// now tells the wall-clock time written in the lease (nil: time.Now).
func New(store Store, name, id string, ttl time.Duration, now func() time.Time, log *slog.Logger) *Holder {
	if now == nil {
		now = time.Now
	}
	return &Holder{store: store, name: name, id: id, ttl: ttl, now: now, log: log.With("lease", name), lost: make(chan struct{})}
}

// Acquire takes the lease, or renews it when this holder has it, once.
// Another holder's unexpired lease is an error matching vault.ErrLeaseHeld
// (Seen names that holder). Any other error leaves Holds as it was: the
// lease is held until it runs out.
func (h *Holder) Acquire(ctx context.Context) error {
	asked := time.Now() // monotonic: the lease counts from before the request
	l, err := h.store.AcquireLease(ctx, h.name, h.id, h.ttl, h.now())
	h.mu.Lock()
	defer h.mu.Unlock()
	var held *vault.LeaseHeldError
	switch {
	case err == nil:
		h.held, h.until, h.seen = true, asked.Add(h.ttl-h.ttl/6), l
	case errors.As(err, &held):
		h.held, h.seen = false, vault.Lease{Holder: held.Holder, Expires: held.Expires}
	}
	return err
}

// AcquireWithin acquires the lease, trying again while another holder has
// it, spaced by backoff (zero: 25 ms doubling up to 250 ms, with jitter),
// until wait has passed: then the last error, which matches
// vault.ErrLeaseHeld. ctx ending while it waits is ctx's error.
func (h *Holder) AcquireWithin(ctx context.Context, wait time.Duration, backoff retry.Backoff) error {
	if backoff.Base <= 0 {
		backoff = waitBackoff
	}
	deadline := time.Now().Add(wait)
	for attempt := 1; ; attempt++ {
		err := h.Acquire(ctx)
		left := time.Until(deadline)
		if !errors.Is(err, vault.ErrLeaseHeld) || left <= 0 {
			return err
		}
		if serr := retry.Sleep(ctx, min(backoff.Delay(attempt), left)); serr != nil {
			return serr
		}
	}
}

// Refresh reads the lease as Vault holds it now (who holds it since when),
// for Seen; a failure leaves Seen as it was.
func (h *Holder) Refresh(ctx context.Context) {
	cur, ok, err := h.store.ReadLease(ctx, h.name)
	if err != nil || !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = cur
}

// Holds says whether this holder has the lease and it has not run out.
func (h *Holder) Holds() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held && time.Now().Before(h.until)
}

// Seen is the lease as last seen: this holder's once taken, else the
// holder that had it.
func (h *Holder) Seen() vault.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen
}

// ID is this holder's name in the lease.
func (h *Holder) ID() string { return h.id }

// Lost is closed once a renewal found the lease taken over by another
// holder (Keep stops renewing it then); each Keep has a channel of its own.
func (h *Holder) Lost() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost
}

// keeper is the renewals of a lease held.
type keeper struct {
	stop, done chan struct{}
}

// Keep renews the lease every third of its TTL until Release. A renewal
// that finds it taken over closes Lost and renews no more; any other
// failure is logged and tried again at the next tick.
func (h *Holder) Keep(ctx context.Context) {
	k := &keeper{stop: make(chan struct{}), done: make(chan struct{})}
	lost := make(chan struct{})
	h.mu.Lock()
	h.keep, h.lost = k, lost
	h.mu.Unlock()
	go func() {
		defer close(k.done)
		tick := time.NewTicker(max(h.ttl/3, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-k.stop:
				return
			case <-tick.C:
			}
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
			err := h.Acquire(rctx)
			cancel()
			if errors.Is(err, vault.ErrLeaseHeld) {
				h.log.Warn("the lease was taken over by another holder", "holder", h.id, "error", err)
				close(lost)
				return
			}
			if err != nil {
				h.log.Warn("could not renew the lease; trying again", "holder", h.id, "error", err)
			}
		}
	}()
}

// Forget is Release for a lease whose object is gone (a deprovisioned
// instance's): the renewals stop and the lease's document is deleted, when
// nobody else holds it, so that the documents do not outlive the objects.
func (h *Holder) Forget() error {
	h.stopKeeping()
	h.mu.Lock()
	h.held = false
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return h.store.DeleteLease(ctx, h.name, h.id, h.now())
}

// stopKeeping stops the renewals under way, waiting for one being made (a
// renewal landing after a release would keep the lease).
func (h *Holder) stopKeeping() {
	h.mu.Lock()
	k := h.keep
	h.keep = nil
	h.mu.Unlock()
	if k != nil {
		close(k.stop)
		<-k.done
	}
}

// Release stops the renewals (waiting for one under way: a renewal landing
// after the release would keep the lease) and gives the lease up at once
// when this holder has it, so that another may take it without waiting for
// it to run out. It returns whether it gave a lease up; an error means the
// lease expires by itself.
func (h *Holder) Release() (bool, error) {
	h.stopKeeping()
	h.mu.Lock()
	held := h.held
	h.held = false
	h.mu.Unlock()
	if !held {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := h.store.ReleaseLease(ctx, h.name, h.id); err != nil {
		return false, err
	}
	return true, nil
}

package broker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/lease"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// keyedMutex serialises the operations on one service instance within this
// process; operations on different instances run in parallel.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func newKeyedMutex() *keyedMutex {
	return &keyedMutex{locks: map[string]*keyedEntry{}}
}

// lock locks key and returns the function that unlocks it.
func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	e := k.locks[key]
	if e == nil {
		e = &keyedEntry{}
		k.locks[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// ErrLeaseLost is the cause of an operation's context that ended because
// another daemon took the instance's lease over (this daemon could not
// renew it in time): the operation writes nothing more.
var ErrLeaseLost = errors.New("the instance's lease was taken over by another broker")

// leaseLostKey carries, in an operation's context, the channel closed when
// its instance's lease is lost, so that a context detached from it (to
// outlive the platform's request) still ends then.
type leaseLostKey struct{}

// ErrInstanceBusy is matched by the error of SettleOperation when another
// daemon sharing the Vault mount held the instance's lease (it is taking an
// operation of the instance further) for all of Options.InstanceLeaseWait.
var ErrInstanceBusy = errors.New("another broker holds the instance's lease")

// Bounds of the per-instance lease.
const (
	defaultInstanceLeaseTTL  = 15 * time.Second
	defaultInstanceLeaseWait = 5 * time.Second
)

// locker serialises the operations on one instance: its mutex in this
// process and, with Options.SharedLimits, its lease in Vault.
type locker struct {
	mutexes  *keyedMutex
	leases   LimitLeases // Options.SharedLimits; nil: this process only
	holderID string
	ttl      time.Duration // Options.InstanceLeaseTTL
	wait     time.Duration // Options.InstanceLeaseWait
	records  records       // existing reads the record first
	// gone holds instance id -> true: removed by the operation holding its
	// lease (its lease document goes too).
	gone   sync.Map
	report reporter
	log    *slog.Logger
}

// existing is lock for an operation on an instance that must exist: with
// the shared lease, an id without a record is answered missing at once,
// without taking a lease, so that requests for unknown ids leave no lease
// document behind in Vault. The caller reads the record again under the
// lock.
func (l *locker) existing(ctx context.Context, id string, missing error) (context.Context, func(), error) {
	if l.leases != nil {
		if _, err := l.records.read(ctx, id, missing); err != nil {
			return ctx, nil, err
		}
	}
	return l.lock(ctx, id)
}

// lock is hold for the OSB handlers: another daemon holding the lease is
// the 422 ConcurrencyError of any concurrent operation, a Vault failure a
// 500 whose detail goes to the operator's log.
func (l *locker) lock(ctx context.Context, id string) (context.Context, func(), error) {
	ctx, unlock, err := l.hold(ctx, id)
	switch {
	case errors.Is(err, ErrInstanceBusy):
		return ctx, nil, concurrency("another operation")
	case err != nil:
		return ctx, nil, l.report.internal("could not take the instance's lease", err, "instance", id)
	}
	return ctx, unlock, nil
}

// hold serialises the operations on instance id and returns the
// operation's context and the function that ends them. Within this process it takes id's mutex. With
// SharedLimits it then takes the instance's lease in Vault too, so that the
// daemons sharing the mount serialise them as well: a daemon's own
// operations queue on its mutex, not on Vault. While another daemon holds
// the lease it waits up to InstanceLeaseWait, then gives up with an error
// matching ErrInstanceBusy; any other error is Vault's. Neither is held
// after an error.
//
// The lease lasts InstanceLeaseTTL and is renewed every third of it until
// the operation ends: an operation's synchronous part (Vault writes, then
// the Director's answer, bounded by DirectorTimeout) can outlast the TTL,
// while a daemon that dies holding it keeps the others from the instance
// only until it expires. A lease found taken over (this daemon could not
// renew it in time) is logged and no longer renewed, and the operation
// stops before its next write: its context (and every context detached from
// it) ends with ErrLeaseLost. Each operation costs two Vault writes (take
// and release; one more per renewal) and two reads.
func (l *locker) hold(ctx context.Context, id string) (context.Context, func(), error) {
	unlock := l.mutexes.lock(id)
	if l.leases == nil {
		return ctx, unlock, nil
	}
	h := lease.New(l.leases, instanceLeaseName(id), l.holderID, l.ttl, nil, l.log.With("instance", id))
	if err := h.AcquireWithin(ctx, l.wait, retry.Backoff{}); err != nil {
		unlock()
		var held *vault.LeaseHeldError
		if errors.As(err, &held) {
			l.log.Info("another broker holds the instance's lease", "instance", id, "holder", held.Holder,
				"waited", l.wait)
			return ctx, nil, fmt.Errorf("%w: %w", ErrInstanceBusy, err)
		}
		return ctx, nil, fmt.Errorf("taking the lease of instance %s: %w", id, err)
	}
	h.Keep(ctx)
	lost := h.Lost()
	ctx, cancel := context.WithCancelCause(context.WithValue(ctx, leaseLostKey{}, lost))
	ended := make(chan struct{})
	go func() {
		select {
		case <-lost:
			cancel(ErrLeaseLost)
		case <-ended:
		}
	}()
	return ctx, func() {
		close(ended)
		cancel(nil)
		if _, gone := l.gone.LoadAndDelete(id); gone {
			if err := h.Forget(); err != nil {
				l.log.Warn("could not delete the lease of a removed instance; it expires by itself", "instance", id, "error", err)
			}
		} else if _, err := h.Release(); err != nil {
			l.log.Warn("could not release the instance's lease; it expires by itself", "instance", id, "error", err)
		}
		unlock()
	}, nil
}

// removed says that the operation holding instance id's lease removed the
// instance: its release deletes the lease's document (with SharedLimits).
func (l *locker) removed(id string) {
	if l.leases != nil {
		l.gone.Store(id, true)
	}
}

// HoldInstance holds instance id against the broker's operations until the
// function it answers is called, as an operation of the broker does
// (locker.hold): its lock in this process and, with SharedLimits, its
// lease in Vault. An error matching ErrInstanceBusy says another daemon
// held the lease for all of InstanceLeaseWait. The reconciler's fleet
// upgrades hold an instance so while they start or record its upgrade.
func (b *Broker) HoldInstance(ctx context.Context, id string) (context.Context, func(), error) {
	return b.locks.hold(ctx, id)
}

// plainLeaseID is an instance id that may follow "instance-" in a lease
// name as it is (vault's lease names are [a-z0-9_-]{1,64}); UUIDs are.
var plainLeaseID = regexp.MustCompile(`^[a-z0-9_-]{1,55}$`)

// instanceLeaseName names the lease of instance id: "instance-{id}", or,
// for an id with capitals or dots, or a long one, "instance_" and 40 hex
// digits of the id's SHA-256. Any string gives a valid lease name (a safe
// Vault path component: the OSB handlers check ids, SettleOperation's
// callers need not), and the two forms never name the same lease ('-' or
// '_' after "instance").
func instanceLeaseName(id string) string {
	if plainLeaseID.MatchString(id) {
		return "instance-" + id
	}
	sum := sha256.Sum256([]byte(id))
	return "instance_" + hex.EncodeToString(sum[:20])
}

package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/lease"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// LimitLeases are the leases in Vault that make the broker safe across
// daemons sharing the mount: a limited provision is one step, and the
// operations on one instance are serialised (Options.SharedLimits);
// *vault.Leases has them (KV v2).
type LimitLeases = lease.Store

// Bounds of the shared limit lease.
const (
	// limitLease names it.
	limitLease = "broker-limits"
	// limitLeaseTTL bounds how long a daemon that died holding it blocks the others.
	limitLeaseTTL = 10 * time.Second
	// limitLeaseWait bounds how long a provision waits for it.
	limitLeaseWait = 15 * time.Second
	// limitLeaseRetry spaces the attempts to take it (35 to 70 ms: it is
	// held only while a provision counts and writes its record).
	limitLeaseRetry = 70 * time.Millisecond
)

// limitLeaseBackoff spaces the attempts to take the shared limit lease.
var limitLeaseBackoff = retry.Backoff{Base: limitLeaseRetry, Limit: limitLeaseRetry}

// shared takes the shared limit lease (waiting for it while another daemon
// holds it) and returns its release; without SharedLimits it does nothing.
func (l *limiter) shared(ctx context.Context) (func(), error) {
	if l.leases == nil {
		return func() {}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, limitLeaseWait)
	defer cancel()
	h := lease.New(l.leases, limitLease, l.holderID, limitLeaseTTL, nil, l.log)
	if err := h.AcquireWithin(ctx, limitLeaseWait, limitLeaseBackoff); err != nil {
		if errors.Is(err, vault.ErrLeaseHeld) || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("waiting for another broker's provision to end: %w", err)
		}
		return nil, err
	}
	return func() {
		if _, err := h.Release(); err != nil {
			l.log.Warn("could not release the shared limit lease; it expires by itself", "error", err)
		}
	}, nil
}

// limiter makes counting a plan's and a service's instances and writing the
// new record one step within this process (and, with SharedLimits, across
// daemons).
//
// Limits: a plan's limit and its service's limit (0 or less: unlimited)
// count every record in the index with that plan or service, whatever its
// state, the one being written excepted: a failed provision counts until it
// is deprovisioned, a deprovision in progress until it is done. Within one
// daemon two concurrent provisions can never both take the last slot: the
// count and the write happen under one mutex, and the write is a
// check-and-set in Vault. Several daemons sharing one Vault each hold their
// own mutex: with SharedLimits a lease in Vault makes the step one across
// them; without, together they can exceed a limit by at most one instance
// per extra daemon in a race.
type limiter struct {
	mu       sync.Mutex
	leases   LimitLeases // Options.SharedLimits; nil: this process only
	holderID string
	store    Records
	metrics  *Metrics
	report   reporter
	log      *slog.Logger
}

// reserve writes rec as req's record when the record is still prev (nil:
// absent) and, with limits, when req's plan and service limits allow it.
func (l *limiter) reserve(ctx context.Context, req instanceRequest, rec, prev *vault.Record, limits bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if limits && (req.plan.Limit > 0 || req.svc.Limit > 0) {
		release, err := l.shared(ctx)
		if err != nil {
			return l.report.internal("could not take the shared limit lease", err, "instance", req.id)
		}
		defer release()
	}
	if limits {
		if err := l.check(ctx, req); err != nil {
			return err
		}
	}
	err := operation.Mark(ctx, l.store, req.id, prev, func(*vault.Record) *vault.Record { return rec })
	switch {
	case errors.Is(err, operation.ErrRaced):
		return errInstanceConflict
	case errors.Is(err, vault.ErrTooLarge):
		l.log.Warn("refused: the instance's record would be too large", "instance", req.id, "error", err)
		return badRequest("the instance's record would be larger than this broker keeps; send fewer or smaller parameters")
	case err != nil:
		return l.report.internal("could not write the instance's record", err, "instance", req.id)
	}
	return nil
}

// check refuses req when its plan or service has reached its limit.
func (l *limiter) check(ctx context.Context, req instanceRequest) error {
	if req.plan.Limit <= 0 && req.svc.Limit <= 0 {
		return nil
	}
	plans, services, err := l.count(ctx, req.id, req.plan.ID, req.svc.ID)
	if err != nil {
		return l.report.internal("could not count the existing instances", err)
	}
	if req.plan.Limit > 0 && plans >= req.plan.Limit {
		l.metrics.refusal("plan")
		l.log.Info("plan limit reached", "plan", req.plan.ID, "limit", req.plan.Limit, "instance", req.id)
		return limitReached(fmt.Sprintf("plan %q", req.plan.Name), req.plan.Limit)
	}
	if req.svc.Limit > 0 && services >= req.svc.Limit {
		l.metrics.refusal("service")
		l.log.Info("service limit reached", "service", req.svc.ID, "limit", req.svc.Limit, "instance", req.id)
		return limitReached(fmt.Sprintf("service %q", req.svc.Name), req.svc.Limit)
	}
	return nil
}

// count counts the records of a plan and of a service, except id's and
// those of adoptions not yet confirmed (Director content uses up no quota).
func (l *limiter) count(ctx context.Context, id, planID, serviceID string) (plans, services int, err error) {
	idx, err := l.store.Index(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the index: %w", err)
	}
	for rid, r := range idx.Records {
		if rid == id || r.Adopted { // an adoption not yet confirmed counts against no limit
			continue
		}
		if r.PlanID == planID {
			plans++
		}
		if r.ServiceID == serviceID {
			services++
		}
	}
	return plans, services, nil
}

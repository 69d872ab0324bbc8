package reconciler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// ErrCircuitOpen is the cause of a run stopped by a circuit breaker: the
// Director, or Vault, failed Config.BreakerThreshold requests in a row.
var ErrCircuitOpen = errors.New("circuit open")

// The systems a run has a breaker for.
const (
	systemDirector = "director"
	systemVault    = "vault"
)

// breaker is a run's circuit breaker for one system. Every request the run
// makes to the system reports its outcome; after threshold failures in a
// row (an answer of the system, such as "not found", is not a failure) the
// breaker opens: it cancels the run with an ErrCircuitOpen cause naming the
// system and the last error, and every later request fails at once without
// reaching the system. A breaker lives as long as its run: the next run
// starts closed, its first request is the probe.
type breaker struct {
	system    string
	threshold int
	failure   func(error) bool        // is err the system failing (not an answer)?
	trip      context.CancelCauseFunc // ends the run

	mu    sync.Mutex
	fails int
	open  error // the cause, once open
}

// newBreaker returns a closed breaker that calls trip when it opens.
func newBreaker(system string, threshold int, failure func(error) bool, trip context.CancelCauseFunc) *breaker {
	return &breaker{system: system, threshold: max(threshold, 1), failure: failure, trip: trip}
}

// call runs req unless the breaker is open, and records its outcome.
func call[T any](b *breaker, ctx context.Context, req func(context.Context) (T, error)) (T, error) {
	if err := b.check(); err != nil {
		var zero T
		return zero, err
	}
	v, err := req(ctx)
	b.record(ctx, err)
	return v, err
}

// check is the open breaker's error (terminal: not worth retrying), nil
// while closed.
func (b *breaker) check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return retry.Terminal(b.open)
}

// record counts a failure in a row, or resets the count; a request that
// ended because the run did is neither.
func (b *breaker) record(ctx context.Context, err error) {
	if err != nil && ctx.Err() != nil {
		return
	}
	b.mu.Lock()
	if err == nil || !b.failure(err) {
		b.fails = 0
		b.mu.Unlock()
		return
	}
	b.fails++
	if b.fails < b.threshold || b.open != nil {
		b.mu.Unlock()
		return
	}
	b.open = fmt.Errorf("%w: %s: %d requests in a row failed, the run stops (the next run tries again); last error: %w",
		ErrCircuitOpen, b.system, b.fails, err)
	cause := b.open
	b.mu.Unlock()
	b.trip(cause)
}

// directorFailure says whether err is the Director failing: anything but an
// answer below 500 (other than 429), such as "not found" or "unauthorized".
func directorFailure(err error) bool {
	var api *bosh.APIError
	if errors.As(err, &api) {
		return api.StatusCode >= 500 || api.StatusCode == http.StatusTooManyRequests
	}
	return !errors.Is(err, bosh.ErrDeploymentNotFound) && !errors.Is(err, bosh.ErrTaskNotFound) &&
		!errors.Is(err, bosh.ErrUnauthorized) && !errors.Is(err, bosh.ErrAnswerTooLarge) &&
		!errors.Is(err, bosh.ErrUntrustedUAA)
}

// vaultAnswers are the errors by which Vault (or the vault package) answers
// about the data, not about its own health.
var vaultAnswers = []error{vault.ErrCorrupt, vault.ErrConflict, vault.ErrNotFound, vault.ErrInvalid,
	vault.ErrTooLarge, vault.ErrDenied, vault.ErrNotMigrated, vault.ErrUnsupportedLayout}

// vaultFailure says whether err is Vault failing (unreachable, sealed,
// server errors), not an answer about the data.
func vaultFailure(err error) bool {
	for _, a := range vaultAnswers {
		if errors.Is(err, a) {
			return false
		}
	}
	return true
}

// guardedDirector is a Director (and Tasks) behind a run's breaker.
type guardedDirector struct {
	d     Director
	tasks Tasks
	b     *breaker
}

func (g guardedDirector) Deployments(ctx context.Context) ([]bosh.Deployment, error) {
	return call(g.b, ctx, g.d.Deployments)
}

func (g guardedDirector) Manifest(ctx context.Context, name string) (string, error) {
	return call(g.b, ctx, func(ctx context.Context) (string, error) { return g.d.Manifest(ctx, name) })
}

func (g guardedDirector) VMs(ctx context.Context, name string) ([]bosh.VM, error) {
	return call(g.b, ctx, func(ctx context.Context) ([]bosh.VM, error) { return g.d.VMs(ctx, name) })
}

func (g guardedDirector) Events(ctx context.Context, q bosh.EventQuery) ([]bosh.Event, error) {
	return call(g.b, ctx, func(ctx context.Context) ([]bosh.Event, error) { return g.d.Events(ctx, q) })
}

func (g guardedDirector) Tasks(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error) {
	return call(g.b, ctx, func(ctx context.Context) ([]bosh.Task, error) { return g.tasks.Tasks(ctx, q) })
}

// guardedStore is a Store behind a run's breaker (the methods it does not
// override reach Vault as they are: the run's history and memory, whose
// failures are logged, not counted), and, with HA, behind the lease's
// fence: a daemon that lost the lease writes nothing more (the run stops).
type guardedStore struct {
	Store
	s     Store
	b     *breaker
	fence func() error            // nil: no HA
	stop  context.CancelCauseFunc // ends the run when the fence closes
}

// fenced is the error of a write the daemon may no longer make (nil: go on).
func (g guardedStore) fenced() error {
	if g.fence == nil {
		return nil
	}
	if err := g.fence(); err != nil {
		g.stop(err)
		return retry.Terminal(err)
	}
	return nil
}

// none adapts a call that returns only an error.
func none(f func(context.Context) error) func(context.Context) (struct{}, error) {
	return func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) }
}

func (g guardedStore) Index(ctx context.Context) (*vault.Index, error) {
	return call(g.b, ctx, g.s.Index)
}

func (g guardedStore) Update(ctx context.Context, changes map[string]vault.Change) (vault.UpdateResult, error) {
	if err := g.fenced(); err != nil {
		return vault.UpdateResult{}, err
	}
	return call(g.b, ctx, func(ctx context.Context) (vault.UpdateResult, error) { return g.s.Update(ctx, changes) })
}

func (g guardedStore) Metadata(ctx context.Context, id string) (*vault.Metadata, error) {
	return call(g.b, ctx, func(ctx context.Context) (*vault.Metadata, error) { return g.s.Metadata(ctx, id) })
}

func (g guardedStore) PutMetadata(ctx context.Context, id string, md *vault.Metadata) error {
	if err := g.fenced(); err != nil {
		return err
	}
	_, err := call(g.b, ctx, none(func(ctx context.Context) error { return g.s.PutMetadata(ctx, id, md) }))
	return err
}

func (g guardedStore) Manifest(ctx context.Context, id string) (string, bool, error) {
	type found struct {
		text string
		ok   bool
	}
	f, err := call(g.b, ctx, func(ctx context.Context) (found, error) {
		text, ok, err := g.s.Manifest(ctx, id)
		return found{text, ok}, err
	})
	return f.text, f.ok, err
}

func (g guardedStore) PutManifest(ctx context.Context, id, text string) error {
	if err := g.fenced(); err != nil {
		return err
	}
	_, err := call(g.b, ctx, none(func(ctx context.Context) error { return g.s.PutManifest(ctx, id, text) }))
	return err
}

func (g guardedStore) CreateManifest(ctx context.Context, id, text string) error {
	if err := g.fenced(); err != nil {
		return err
	}
	_, err := call(g.b, ctx, none(func(ctx context.Context) error { return g.s.CreateManifest(ctx, id, text) }))
	return err
}

func (g guardedStore) Instances(ctx context.Context) (map[string]bool, error) {
	return call(g.b, ctx, g.s.Instances)
}

func (g guardedStore) Backup(ctx context.Context, id string) (string, error) {
	if err := g.fenced(); err != nil {
		return "", err
	}
	return call(g.b, ctx, func(ctx context.Context) (string, error) { return g.s.Backup(ctx, id) })
}

func (g guardedStore) LatestBackupRecord(ctx context.Context, id string) (*vault.Record, string, error) {
	type latest struct {
		rec *vault.Record
		id  string
	}
	l, err := call(g.b, ctx, func(ctx context.Context) (latest, error) {
		rec, id, err := g.s.LatestBackupRecord(ctx, id)
		return latest{rec, id}, err
	})
	return l.rec, l.id, err
}

func (g guardedStore) RemoveAll(ctx context.Context, id string) (string, error) {
	if err := g.fenced(); err != nil {
		return "", err
	}
	return g.s.RemoveAll(ctx, id)
}

func (g guardedStore) WriteState(ctx context.Context, name string, v any) error {
	if err := g.fenced(); err != nil {
		return err
	}
	return g.s.WriteState(ctx, name, v)
}

func (g guardedStore) AppendEvent(ctx context.Context, id string, e vault.Event) error {
	if err := g.fenced(); err != nil {
		return err
	}
	return g.s.AppendEvent(ctx, id, e)
}

func (g guardedStore) PruneEvents(ctx context.Context, id string, opts vault.HistoryOptions, now time.Time) (int, error) {
	if err := g.fenced(); err != nil {
		return 0, err
	}
	return g.s.PruneEvents(ctx, id, opts, now)
}

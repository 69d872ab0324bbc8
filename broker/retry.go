package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/operation"
)

// A Director that hiccups (an answer 5xx or 429, no answer, a timeout:
// bosh.Transient) is asked again, waiting longer each time, before an
// operation or a bind reports a failure; the failure then names that
// Director. An answer about the request (404, 401, 400) is not asked again.

// DefaultDirectorRetries is how many more times a call meeting a transient
// fault is made (Options.DirectorRetries).
const DefaultDirectorRetries = 4

// directorBackoff spaces the retries: 0.25 s, 0.5 s, 1 s, 2 s, then 4 s
// (each with jitter), always within the operation's own deadline.
var directorBackoff = retry.Backoff{Base: 250 * time.Millisecond, Limit: 4 * time.Second}

// directorRetryBudget is when no retry starts any more: a platform waits
// about a minute for an answer (Cloud Foundry's default), and a Director
// that does not answer at all takes its client's timeout per attempt.
const directorRetryBudget = 20 * time.Second

// directorError is a call to a Director that still failed after its
// retries; its text names the Director.
type directorError struct {
	director string
	attempts int
	err      error
}

func (e *directorError) Error() string {
	return fmt.Sprintf("the BOSH Director %q failed %d times in a row: %v", e.director, e.attempts, e.err)
}

func (e *directorError) Unwrap() error { return e.err }

// ask makes call, again after each transient fault of d while retries
// remain, ctx lasts and directorRetryBudget has not passed, logging each
// retry. A transient fault that outlasts them comes back as a
// *directorError naming d.
func (ds *directors) ask(ctx context.Context, d NamedDirector, what string, call func(context.Context) error) error {
	attempts, start := 0, time.Now()
	err := retry.Do(ctx, ds.retries, directorBackoff, func(attempt int, err error, wait time.Duration) {
		ds.log.Warn("the BOSH Director failed; asking again", "director", d.Name, "call", what,
			"attempt", attempt, "retry_in", wait, "error", err)
	}, func(ctx context.Context) error {
		attempts++
		err := call(ctx)
		if err != nil && (!bosh.Transient(err) || time.Since(start) > directorRetryBudget) {
			return retry.Terminal(err)
		}
		return err
	})
	if bosh.Transient(err) {
		return &directorError{director: d.Name, attempts: attempts, err: err}
	}
	return err
}

// createTask makes call, which creates a task on d with op's context id,
// again after transient faults (ask); a request the Director took but
// whose answer was lost is found by its context id, not made twice
// (operation.Start).
func (ds *directors) createTask(ctx context.Context, d NamedDirector, deployment, contextID, what string, call func(context.Context) (bosh.Task, error)) (bosh.Task, error) {
	return operation.Start(ctx, contextID, operation.OfDeployment(d.Reader, deployment), func(ctx context.Context, try func(context.Context) error) error {
		return ds.ask(ctx, d, what, try)
	}, call)
}

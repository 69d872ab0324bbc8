package sim

import (
	"context"
	"maps"
	"net/http"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// lastOperationPoll is one job's polling of a broker's last_operation (an
// instance's or a binding's), as CC's reoccurring jobs poll: at once, then
// every interval, or the broker's Retry-After when longer (capped at
// maxPollInterval); an unreachable broker is asked again; past the plan's
// maximum polling duration the job times out.
type lastOperationPoll struct {
	client   *brokerClient
	broker   Broker
	user     string // the originating identity's user_id
	path     string // the resource's path at the broker, e.g. /v2/service_instances/GUID
	query    map[string][]string
	interval time.Duration
	start    time.Time     // when the job began
	limit    time.Duration // the plan's maximum polling duration
	// read applies one answer: done when the operation ended, with the
	// job's error (nil: it succeeded).
	read func(a osbAnswer) (done bool, err *cfError)
	// timedOut records the operation timed out; closed is the job's error
	// when the simulator closes meanwhile.
	timedOut func()
	closed   *cfError
}

// run polls until the broker ends the operation, the job times out or ctx
// ends; the answer is the job's error.
func (p lastOperationPoll) run(ctx context.Context, operation string) *cfError {
	q := maps.Clone(p.query)
	if operation != "" {
		q["operation"] = []string{operation}
	}
	call := osbCall{method: http.MethodGet, path: p.path + "/last_operation", query: q}
	wait := p.interval
	for {
		if a, err := p.client.instanceCall(ctx, p.broker, p.user, call); err == nil {
			if done, e := p.read(a); done {
				return e
			}
			if a.retryAfter > 0 {
				wait = min(max(a.retryAfter, p.interval), maxPollInterval)
			}
		}
		if time.Since(p.start)+wait > p.limit {
			p.timedOut()
			return &cfError{290006, "CF-JobTimeout", "The job execution has timed out."}
		}
		if !simkit.Sleep(ctx, wait) {
			return p.closed
		}
	}
}

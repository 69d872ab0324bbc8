package notify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
)

// Event types.
const (
	Orphaned    = "orphaned"
	Unorphaned  = "unorphaned"
	Drift       = "drift"
	Quarantined = "quarantined"
	Conflict    = "conflict"
	RunFailed   = "run_failed"
	Remediated  = "remediated"
	// Unhealthy: an instance whose VMs are not all running (a process
	// failing, an agent not answering).
	Unhealthy = "unhealthy"
	// Recovered: an instance that was unhealthy has its VMs all running again.
	Recovered = "recovered"
	// Outdated: an instance that does not run what its plan now deploys (an
	// older maintenance_info version, or none), once per version its plan wants.
	Outdated = "outdated"
	// OrphanDeployment: an instance whose deployment runs and whose records
	// Vault holds that the platform (the Cloud Controller) does not have,
	// once when a whole read of the platform first finds it so.
	OrphanDeployment = "orphan_deployment"
	// BindingLost: a binding whose credentials are gone from Vault and
	// could be put back neither from a backup nor from the manifest; once.
	BindingLost = "binding_lost"
)

// Types lists every event type, in the order above.
var Types = []string{Orphaned, Unorphaned, Drift, Quarantined, Conflict, RunFailed, Remediated, Unhealthy, Recovered, Outdated,
	OrphanDeployment, BindingLost}

// Event is one notification; its JSON is the webhook's body.
type Event struct {
	// ID is unique (random hex, set by Notify when empty): receivers
	// de-duplicate with it, delivery being at least once.
	ID string `json:"id"`
	// Type is one of Types.
	Type string `json:"event"`
	// InstanceID is the service instance concerned, if any.
	InstanceID string `json:"instance_id,omitempty"`
	// Deployment is the BOSH deployment concerned, if any.
	Deployment string `json:"deployment,omitempty"`
	// Director names the BOSH Director concerned, if any.
	Director string `json:"director,omitempty"`
	// Reason says why, for a human.
	Reason string `json:"reason,omitempty"`
	// RunID is the reconciler run that saw it, if any.
	RunID string `json:"run_id,omitempty"`
	// Time is when it happened; set by Notify when zero (UTC).
	Time time.Time `json:"time"`
}

// Bounds of an event's texts: a queue of 1,000 events then holds at most
// a few megabytes, whatever a Director's content made them say.
const (
	maxReason = 1024
	maxName   = 512
)

// bounded is e with its texts cut on a character boundary.
func (e Event) bounded() Event {
	e.Reason = textcut.Marked(e.Reason, maxReason, "...")
	for _, f := range []*string{&e.InstanceID, &e.Deployment, &e.Director, &e.RunID} {
		*f = textcut.Marked(*f, maxName, "...")
	}
	return e
}

// Webhook is one receiver.
type Webhook struct {
	// URL is where events are posted: http or https, no user info, no
	// fragment. Required. Only scheme://host/path of it is ever logged.
	URL string
	// Events are the types it gets. Default (empty): every type.
	Events []string
	// Secret is the HMAC-SHA256 key of the X-Blacksmith-Signature header. Required.
	Secret string
}

// Options configures a Notifier. Defaults are filled in by New.
type Options struct {
	// Webhooks are the receivers. Default none: events go nowhere.
	Webhooks []Webhook
	// Registerer receives the metrics. Default nil: not registered.
	Registerer prometheus.Registerer
	// Logger receives the logs. Default slog.Default().
	Logger *slog.Logger
	// QueueSize bounds the events waiting per webhook; over it the oldest
	// is dropped (counted, logged). Default 1000.
	QueueSize int
	// Attempts is the number of deliveries tried per event. Default 8.
	Attempts int
	// Backoff spaces the attempts. Default Base 1s, Limit 5m.
	Backoff retry.Backoff
	// Timeout bounds one delivery attempt, the answer included. Default 10s.
	Timeout time.Duration
}

// Notifier queues events and, while Run runs, delivers them to the webhooks
// that want them. It is safe for concurrent use; a nil *Notifier does nothing.
type Notifier struct {
	hooks    []*hook
	byType   map[string][]*hook // the hooks that want each type
	log      *slog.Logger
	metrics  *collectors
	http     *http.Client
	attempts int
	backoff  retry.Backoff
	running  atomic.Bool
}

// hook is one webhook with its queue and metric series.
type hook struct {
	index  string // its index in Options.Webhooks: the webhook label
	url    string
	logURL string // scheme://host/path: no user info, query or fragment
	secret []byte
	queue  *queue
	series series
}

// New validates opts and returns a Notifier; it does no I/O. Every problem
// of every webhook is reported at once, each naming webhooks[i].field.
func New(opts Options) (*Notifier, error) {
	opts = withDefaults(opts)
	urls, err := validate(opts)
	if err != nil {
		return nil, err
	}
	n := &Notifier{
		byType:   map[string][]*hook{},
		log:      opts.Logger,
		metrics:  newCollectors(opts.Registerer),
		attempts: opts.Attempts,
		backoff:  opts.Backoff,
		http:     newHTTPClient(opts.Timeout),
	}
	for i, w := range opts.Webhooks {
		u := urls[i]
		h := &hook{
			index:  strconv.Itoa(i),
			url:    u.String(),
			logURL: (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String(),
			secret: []byte(w.Secret),
		}
		h.series = n.metrics.series(h.index)
		h.queue = newQueue(opts.QueueSize, h.series.queueLength)
		n.hooks = append(n.hooks, h)
		for _, t := range wanted(w.Events) {
			n.byType[t] = append(n.byType[t], h)
		}
	}
	return n, nil
}

// wanted is the set of types a webhook's Events filter lets through.
func wanted(events []string) []string {
	if len(events) == 0 {
		return Types
	}
	seen := map[string]bool{}
	var types []string
	for _, t := range events {
		if !seen[t] {
			seen[t] = true
			types = append(types, t)
		}
	}
	return types
}

// Notify queues e for every webhook that wants its type, setting its ID
// and Time when empty. It never blocks and never fails: a full queue drops
// its oldest event. An event no webhook wants (an unknown type included)
// costs nothing.
func (n *Notifier) Notify(e Event) {
	if n == nil {
		return
	}
	hooks := n.byType[e.Type]
	if len(hooks) == 0 {
		return
	}
	if e.ID == "" {
		e.ID = newID()
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	e = e.bounded()
	for _, h := range hooks {
		if dropped, first := h.queue.push(e); dropped != nil {
			h.series.dropped.Inc()
			if first {
				n.log.Warn("webhook queue full: dropping its oldest events", "webhook", h.index,
					"url", h.logURL, "event_id", dropped.ID, "event", dropped.Type)
			}
		}
	}
}

// newID is 16 random bytes in hex.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// Run delivers events until ctx ends, with one worker per webhook, and
// returns when ctx ended and the workers stopped. What is still queued then
// (and an event abandoned mid-delivery) is logged and counted as dropped.
// A nil or already running Notifier just waits for ctx.
func (n *Notifier) Run(ctx context.Context) {
	if n == nil {
		<-ctx.Done()
		return
	}
	if !n.running.CompareAndSwap(false, true) {
		n.log.Error("webhook notifier already running: this Run only waits for its context")
		<-ctx.Done()
		return
	}
	defer n.running.Store(false)
	var wg sync.WaitGroup
	for _, h := range n.hooks {
		wg.Go(func() { n.work(ctx, h) })
	}
	wg.Wait()
	<-ctx.Done()
}

// work delivers h's events in order until ctx ends, then drops the rest.
func (n *Notifier) work(ctx context.Context, h *hook) {
	for ctx.Err() == nil {
		e, ok, dropped := h.queue.pop()
		n.logDropped(h, dropped)
		if !ok {
			select {
			case <-ctx.Done():
			case <-h.queue.ready:
			}
			continue
		}
		n.deliver(ctx, h, e)
	}
	left, dropped := h.queue.drain()
	n.logDropped(h, dropped)
	if left > 0 {
		h.series.dropped.Add(float64(left))
		n.log.Warn("webhook notifier stopping: queued events dropped", "webhook", h.index,
			"url", h.logURL, "dropped", left)
	}
}

// logDropped logs the events a full queue dropped (counted as they were).
func (n *Notifier) logDropped(h *hook, dropped int) {
	if dropped > 0 {
		n.log.Warn("webhook queue was full: oldest events dropped", "webhook", h.index,
			"url", h.logURL, "dropped", dropped)
	}
}

package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/notify"
)

// fastBackoff keeps retries to milliseconds.
var fastBackoff = retry.Backoff{Base: time.Millisecond, Limit: 5 * time.Millisecond}

// hang is the answer of a receiver that keeps the request until the
// client gives up or the spec ends.
const hang = -1

// delivery is one request a receiver got, and the status it answered.
type delivery struct {
	header http.Header
	body   []byte
	event  notify.Event
	status int
}

// receiver is a webhook receiver on loopback that records every request
// and answers the nth (from 1) with answer(n).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []delivery
	answer func(n int) int
}

// newReceiver starts a receiver, closed when the spec ends; nil answer: 200.
func newReceiver(answer func(n int) int) *receiver {
	GinkgoHelper()
	if answer == nil {
		answer = func(int) int { return http.StatusOK }
	}
	r := &receiver{answer: answer}
	release := make(chan struct{})
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve(release)))
	Expect(r.URL).To(HavePrefix("http://127.0.0.1:"), "only loopback may be contacted")
	DeferCleanup(r.Close)
	DeferCleanup(func() { close(release) }) // runs first: lets hanging requests end
	return r
}

func (r *receiver) serve(release <-chan struct{}) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, req *http.Request) {
		defer GinkgoRecover()
		if req.URL.Path == "/followed" {
			Fail("a redirect was followed")
		}
		body, err := io.ReadAll(req.Body)
		Expect(err).NotTo(HaveOccurred())
		d := delivery{header: req.Header.Clone(), body: body}
		Expect(json.Unmarshal(body, &d.event)).To(Succeed())
		r.mu.Lock()
		d.status = r.answer(len(r.got) + 1)
		r.got = append(r.got, d)
		r.mu.Unlock()
		if d.status == hang {
			select {
			case <-release:
			case <-req.Context().Done():
			}
			return
		}
		if d.status >= 300 && d.status < 400 {
			w.Header().Set("Location", "/followed")
		}
		w.WriteHeader(d.status)
		_, _ = w.Write(bytes.Repeat([]byte("x"), 100<<10)) // more than is read
	}
}

// requests are the requests received so far.
func (r *receiver) requests() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// count is the number of requests received so far.
func (r *receiver) count() int { return len(r.requests()) }

// delivered are the ids of the events answered with a 2xx, in order.
func (r *receiver) delivered() []string {
	var ids []string
	for _, d := range r.requests() {
		if d.status >= 200 && d.status < 300 {
			ids = append(ids, d.event.ID)
		}
	}
	return ids
}

// newNotifier is notify.New on a registry of its own, logging to the spec's output.
func newNotifier(opts notify.Options) (*notify.Notifier, *prometheus.Registry) {
	GinkgoHelper()
	reg := prometheus.NewRegistry()
	opts.Registerer = reg
	if opts.Logger == nil {
		opts.Logger = testLogger()
	}
	if opts.Backoff.Base == 0 {
		opts.Backoff = fastBackoff
	}
	n, err := notify.New(opts)
	Expect(err).NotTo(HaveOccurred())
	return n, reg
}

// start runs n until the spec ends; it returns the channel closed when Run
// returns and the function that ends Run's context.
func start(n *notify.Notifier) (<-chan struct{}, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		n.Run(ctx)
	}()
	DeferCleanup(func() {
		cancel()
		Eventually(stopped).Should(BeClosed())
	})
	return stopped, cancel
}

func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// slogTo is a logger writing to w (and the spec's output).
func slogTo(w *logBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// logBuffer collects logs, safe for concurrent writers.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, _ = GinkgoWriter.Write(p)
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// results are the deliveries_total counters of webhook, by result.
func results(reg *prometheus.Registry, webhook string) map[string]float64 {
	GinkgoHelper()
	got := map[string]float64{}
	for _, r := range []string{"delivered", "retried", "failed", "dropped"} {
		got[r] = value(reg, "blacksmith_webhook_deliveries_total", map[string]string{"webhook": webhook, "result": r})
	}
	return got
}

// resultsOf polls results, for Eventually: a receiver records a delivery
// before its answer reaches the notifier.
func resultsOf(reg *prometheus.Registry, webhook string) func() map[string]float64 {
	return func() map[string]float64 { return results(reg, webhook) }
}

// value is the value of a counter or gauge series of reg with exactly these labels.
func value(reg *prometheus.Registry, name string, labels map[string]string) float64 {
	GinkgoHelper()
	families, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if fmt.Sprint(got) != fmt.Sprint(labels) {
				continue
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	Fail("no series " + name + fmt.Sprint(labels))
	return 0
}

// hook is a webhook to url with the secret "s3cret" and these event types.
func hook(url string, events ...string) notify.Webhook {
	return notify.Webhook{URL: url, Secret: "s3cret", Events: events}
}

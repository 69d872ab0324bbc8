package reconciler_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// receiver is a webhook endpoint on loopback that refuses the first
// failures deliveries with 500, checks every signature and keeps the events.
type receiver struct {
	mu       sync.Mutex
	failures int
	events   []notify.Event
	badSig   int
	attempts int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	mac := hmac.New(sha256.New, []byte("hook-secret"))
	mac.Write(body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.attempts++
	if r.Header.Get("X-Blacksmith-Signature") != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
		rc.badSig++
	}
	if rc.failures > 0 {
		rc.failures--
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	var e notify.Event
	_ = json.Unmarshal(body, &e)
	rc.events = append(rc.events, e)
}

func (rc *receiver) types() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, e := range rc.events {
		out = append(out, e.Type)
	}
	return out
}

var _ = Describe("webhook notifications", func() {
	It("announce each transition once, signed, delivered at least once through failures, without holding a run", func() {
		rc := &receiver{failures: 2}
		srv := httptest.NewServer(rc)
		DeferCleanup(srv.Close)
		n, err := notify.New(notify.Options{Webhooks: []notify.Webhook{{URL: srv.URL, Secret: "hook-secret"}},
			Backoff: retry.Backoff{Base: 10 * time.Millisecond, Limit: 50 * time.Millisecond}})
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { n.Run(ctx); close(done) }()
		DeferCleanup(func() { cancel(); <-done })

		e := newEnv(envOptions{seed: 3})
		e.m = e.newManagerWith(func(o *reconciler.Options) { o.Notifier, o.Directors[0].Name = n, "d1" })
		e.run(report.RunOptions{})
		gone := e.names[0]
		e.sim.RemoveDeployment(gone)
		start := time.Now()
		Expect(e.run(report.RunOptions{}).Orphaned).To(Equal(1))
		Expect(time.Since(start)).To(BeNumerically("<", time.Second), "the run does not wait for the receiver")
		Eventually(rc.types).Should(Equal([]string{"orphaned"}))
		rc.mu.Lock()
		got := rc.events[0]
		Expect(rc.attempts).To(Equal(3), "two refused, then delivered")
		Expect(rc.badSig).To(BeZero())
		rc.mu.Unlock()
		Expect(got).To(And(HaveField("InstanceID", instanceID(gone)), HaveField("Deployment", gone),
			HaveField("Director", "d1"), HaveField("Reason", ContainSubstring("no longer listed")), HaveField("ID", Not(BeEmpty()))))

		e.run(report.RunOptions{})
		Consistently(rc.types, 300*time.Millisecond).Should(HaveLen(1), "an orphan that stays one is not announced again")

		Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments"})).To(Succeed())
		for range 2 {
			_, err := e.m.RunOnce(context.Background(), report.RunOptions{})
			Expect(err).To(HaveOccurred())
		}
		Eventually(rc.types).Should(Equal([]string{"orphaned", "run_failed"}), "two failed runs, one transition")
	})
})

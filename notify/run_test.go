package notify_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/blacksmith-reconciler/blacksmith/notify"
)

var _ = Describe("Notify and Run", func() {
	It("never blocks on a full queue: drops the oldest, counted, and delivers the newest in order", func() {
		r := newReceiver(nil)
		logs := &logBuffer{}
		n, reg := newNotifier(notify.Options{QueueSize: 3, Logger: slogTo(logs), Webhooks: []notify.Webhook{hook(r.URL)}})
		done := make(chan struct{})
		go func() { // Run has not started: nothing leaves the queue
			defer close(done)
			for i := range 1000 {
				n.Notify(notify.Event{Type: notify.Drift, ID: fmt.Sprint(i)})
			}
		}()
		Eventually(done).Should(BeClosed())
		Expect(results(reg, "0")["dropped"]).To(Equal(997.0))
		Expect(value(reg, "blacksmith_webhook_queue_length", map[string]string{"webhook": "0"})).To(Equal(3.0))
		Expect(logs.String()).To(ContainSubstring("event_id=0 "), "the first drop is logged with the event")

		start(n)
		Eventually(r.delivered).Should(Equal([]string{"997", "998", "999"}))
		Expect(logs.String()).To(ContainSubstring("dropped=997"), "the worker logs how many were dropped")
		Expect(value(reg, "blacksmith_webhook_queue_length", map[string]string{"webhook": "0"})).To(Equal(0.0))
	})

	It("never blocks while a receiver hangs", func() {
		r := newReceiver(func(int) int { return hang })
		n, reg := newNotifier(notify.Options{QueueSize: 2, Timeout: time.Minute, Webhooks: []notify.Webhook{hook(r.URL)}})
		start(n)
		n.Notify(notify.Event{Type: notify.Drift})
		Eventually(r.count).Should(Equal(1))
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 10 {
				n.Notify(notify.Event{Type: notify.Drift})
			}
		}()
		Eventually(done).Should(BeClosed())
		Expect(results(reg, "0")["dropped"]).To(Equal(8.0))
	})

	It("costs nothing for a type no webhook wants", func() {
		r := newReceiver(nil)
		n, reg := newNotifier(notify.Options{Webhooks: []notify.Webhook{hook(r.URL, notify.Drift)}})
		start(n)
		allocs := testing.AllocsPerRun(100, func() {
			n.Notify(notify.Event{Type: notify.Orphaned, Reason: "no one listens"})
			n.Notify(notify.Event{Type: "not-a-type"})
		})
		Expect(allocs).To(BeZero())
		Expect(value(reg, "blacksmith_webhook_queue_length", map[string]string{"webhook": "0"})).To(BeZero())
		Consistently(r.count, 50*time.Millisecond).Should(BeZero())
	})

	It("returns from Run promptly when ctx ends, counting what was queued or in flight as dropped", func() {
		r := newReceiver(func(int) int { return hang })
		logs := &logBuffer{}
		n, reg := newNotifier(notify.Options{Timeout: time.Minute, Logger: slogTo(logs), Webhooks: []notify.Webhook{hook(r.URL)}})
		stopped, stop := start(n)
		for range 3 {
			n.Notify(notify.Event{Type: notify.Drift})
		}
		Eventually(r.count).Should(Equal(1))
		began := time.Now()
		stop()
		Eventually(stopped).Within(time.Second).Should(BeClosed())
		GinkgoWriter.Printf("Run returned %v after its context ended\n", time.Since(began))
		Expect(results(reg, "0")).To(Equal(map[string]float64{"delivered": 0, "retried": 0, "failed": 0, "dropped": 3}))
		Expect(value(reg, "blacksmith_webhook_queue_length", map[string]string{"webhook": "0"})).To(BeZero())
		Expect(logs.String()).To(And(ContainSubstring("abandoned"), ContainSubstring("dropped=2")))
	})

	It("runs once at a time: a second Run only waits for its context", func() {
		r := newReceiver(nil)
		n, _ := newNotifier(notify.Options{Webhooks: []notify.Webhook{hook(r.URL)}})
		start(n)
		ctx, cancel := context.WithCancel(context.Background())
		second := make(chan struct{})
		go func() {
			defer close(second)
			n.Run(ctx)
		}()
		for _, id := range []string{"a", "b", "c"} {
			n.Notify(notify.Event{Type: notify.Drift, ID: id})
		}
		Eventually(r.delivered).Should(Equal([]string{"a", "b", "c"}))
		Consistently(r.count, 50*time.Millisecond).Should(Equal(3))
		cancel()
		Eventually(second).Should(BeClosed())
	})

	It("is safe as a nil Notifier", func() {
		var n *notify.Notifier
		n.Notify(notify.Event{Type: notify.Drift})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		n.Run(ctx)
	})

	It("starts every series at 0, with lint-clean metrics", func() {
		n, reg := newNotifier(notify.Options{Webhooks: []notify.Webhook{hook("https://a.example/x"), hook("https://b.example/y")}})
		Expect(n).NotTo(BeNil())
		for _, w := range []string{"0", "1"} {
			Expect(results(reg, w)).To(Equal(map[string]float64{"delivered": 0, "retried": 0, "failed": 0, "dropped": 0}))
			Expect(value(reg, "blacksmith_webhook_queue_length", map[string]string{"webhook": w})).To(BeZero())
		}
		families, err := reg.Gather()
		Expect(err).NotTo(HaveOccurred())
		problems, err := promlint.NewWithMetricFamilies(families).Lint()
		Expect(err).NotTo(HaveOccurred())
		Expect(problems).To(BeEmpty())
		_, err = notify.New(notify.Options{Registerer: reg, Webhooks: []notify.Webhook{hook("https://c.example/z")}})
		Expect(err).NotTo(HaveOccurred(), "a second notifier shares the registered collectors")
	})
})

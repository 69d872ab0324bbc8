package notify_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/notify"
)

// failing answers the first n requests with status, then 200.
func failing(n, status int) func(int) int {
	return func(i int) int {
		if i <= n {
			return status
		}
		return http.StatusOK
	}
}

var _ = Describe("delivery", func() {
	It("posts the event's JSON with its headers, signed with the webhook's secret", func() {
		r := newReceiver(nil)
		n, reg := newNotifier(notify.Options{Webhooks: []notify.Webhook{hook(r.URL + "/hooks?token=t")}})
		start(n)
		before := time.Now()
		n.Notify(notify.Event{Type: notify.Orphaned, InstanceID: "i-1", Deployment: "redis-i-1",
			Director: "lab", Reason: "not in the Director", RunID: "run-7"})
		given := time.Date(2024, 5, 6, 7, 8, 9, 0, time.FixedZone("CEST", 2*3600))
		n.Notify(notify.Event{ID: "my-id", Type: notify.Drift, Time: given})
		Eventually(r.count).Should(Equal(2))

		first, second := r.requests()[0], r.requests()[1]
		mac := hmac.New(sha256.New, []byte("s3cret"))
		mac.Write(first.body)
		Expect(first.header.Get("X-Blacksmith-Signature")).To(Equal("sha256=" + hex.EncodeToString(mac.Sum(nil))))
		Expect(first.header.Get("Content-Type")).To(Equal("application/json"))
		Expect(first.header.Get("User-Agent")).To(Equal("blacksmith"))
		Expect(first.header.Get("X-Blacksmith-Event")).To(Equal("orphaned"))
		Expect(first.header.Get("X-Blacksmith-Delivery")).To(Equal(first.event.ID))
		Expect(first.event.ID).To(MatchRegexp("^[0-9a-f]{32}$"))
		Expect(first.event.Time.Location()).To(Equal(time.UTC))
		Expect(first.event.Time).To(BeTemporally("~", before, time.Second))
		Expect(first.event).To(Equal(notify.Event{ID: first.event.ID, Type: notify.Orphaned, InstanceID: "i-1",
			Deployment: "redis-i-1", Director: "lab", Reason: "not in the Director", RunID: "run-7", Time: first.event.Time}))
		Expect(string(first.body)).To(ContainSubstring(`"event":"orphaned"`))

		Expect(second.event.ID).To(Equal("my-id"))
		Expect(second.event.Time.Equal(given)).To(BeTrue())
		Expect(second.header.Get("X-Blacksmith-Delivery")).To(Equal("my-id"))
		Expect(string(second.body)).NotTo(ContainSubstring("instance_id"), "empty fields are left out")
		Eventually(resultsOf(reg, "0")).Should(HaveKeyWithValue("delivered", 2.0))
	})

	It("cuts an event's texts, whatever a Director's content made them say", func() {
		r := newReceiver(nil)
		n, _ := newNotifier(notify.Options{Webhooks: []notify.Webhook{hook(r.URL)}})
		start(n)
		huge := strings.Repeat("é<", 1<<19)
		n.Notify(notify.Event{Type: notify.RunFailed, InstanceID: huge, Deployment: huge, Director: huge, Reason: huge, RunID: "run-8"})
		Eventually(r.count).Should(Equal(1))
		got := r.requests()[0]
		Expect(len(got.body)).To(BeNumerically("<", 16<<10), "some 3 KiB of text, as JSON escapes it")
		Expect(got.event.Reason).To(HaveSuffix("..."))
		Expect(utf8.ValidString(got.event.Reason)).To(BeTrue(), "cut on a character")
		Expect(got.event.RunID).To(Equal("run-8"))
	})

	It("retries a 500 with the backoff and delivers on the 4th attempt, once", func() {
		r := newReceiver(failing(3, http.StatusInternalServerError))
		n, reg := newNotifier(notify.Options{Webhooks: []notify.Webhook{hook(r.URL)}})
		start(n)
		n.Notify(notify.Event{Type: notify.Quarantined})
		Eventually(r.delivered).Should(HaveLen(1))
		Eventually(resultsOf(reg, "0")).Should(Equal(
			map[string]float64{"delivered": 1, "retried": 3, "failed": 0, "dropped": 0}))
		Consistently(r.count, 50*time.Millisecond).Should(Equal(4))
		ids := map[string]bool{}
		for _, d := range r.requests() {
			ids[d.header.Get("X-Blacksmith-Delivery")] = true
		}
		Expect(ids).To(HaveLen(1), "every attempt carries the same delivery id")
	})

	It("gives up after Attempts, and goes on with the next event", func() {
		r := newReceiver(failing(3, http.StatusServiceUnavailable))
		n, reg := newNotifier(notify.Options{Attempts: 3, Webhooks: []notify.Webhook{hook(r.URL)}})
		start(n)
		n.Notify(notify.Event{Type: notify.Conflict, ID: "lost"})
		n.Notify(notify.Event{Type: notify.Conflict, ID: "next"})
		Eventually(r.delivered).Should(Equal([]string{"next"}))
		Expect(r.count()).To(Equal(4))
		Eventually(resultsOf(reg, "0")).Should(Equal(map[string]float64{"delivered": 1, "retried": 2, "failed": 1, "dropped": 0}))
	})

	DescribeTable("retries by the receiver's answer",
		func(status int, retried bool) {
			r := newReceiver(failing(1, status))
			n, reg := newNotifier(notify.Options{Webhooks: []notify.Webhook{hook(r.URL)}})
			start(n)
			n.Notify(notify.Event{Type: notify.RunFailed})
			if retried {
				Eventually(r.delivered).Should(HaveLen(1))
				Eventually(resultsOf(reg, "0")).Should(Equal(map[string]float64{"delivered": 1, "retried": 1, "failed": 0, "dropped": 0}))
				return
			}
			Eventually(resultsOf(reg, "0")).Should(Equal(
				map[string]float64{"delivered": 0, "retried": 0, "failed": 1, "dropped": 0}))
			Expect(r.count()).To(Equal(1))
		},
		Entry("400: refused for good", http.StatusBadRequest, false),
		Entry("401", http.StatusUnauthorized, false),
		Entry("404", http.StatusNotFound, false),
		Entry("422", http.StatusUnprocessableEntity, false),
		Entry("301: a redirect is not followed", http.StatusMovedPermanently, false),
		Entry("307", http.StatusTemporaryRedirect, false),
		Entry("408: retried", http.StatusRequestTimeout, true),
		Entry("429", http.StatusTooManyRequests, true),
		Entry("500", http.StatusInternalServerError, true),
		Entry("502", http.StatusBadGateway, true),
		Entry("503", http.StatusServiceUnavailable, true),
	)

	It("retries an attempt the receiver does not answer within Timeout", func() {
		r := newReceiver(failing(1, hang))
		n, reg := newNotifier(notify.Options{Timeout: 100 * time.Millisecond, Webhooks: []notify.Webhook{hook(r.URL)}})
		start(n)
		n.Notify(notify.Event{Type: notify.Remediated})
		Eventually(r.delivered).Should(HaveLen(1))
		Eventually(resultsOf(reg, "0")).Should(Equal(map[string]float64{"delivered": 1, "retried": 1, "failed": 0, "dropped": 0}))
	})

	It("logs the refusal's status, never the secret nor the URL's query", func() {
		r := newReceiver(func(int) int { return http.StatusForbidden })
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		closed := "http://" + ln.Addr().String() // nothing listens there any more: connection refused
		Expect(ln.Close()).To(Succeed())
		logs := &logBuffer{}
		n, reg := newNotifier(notify.Options{
			Attempts: 2,
			Logger:   slogTo(logs),
			Webhooks: []notify.Webhook{
				{URL: r.URL + "/refusing?token=hunter2", Secret: "topsecret"},
				{URL: closed + "/gone?token=hunter2", Secret: "topsecret"},
			},
		})
		start(n)
		n.Notify(notify.Event{Type: notify.Drift})
		Eventually(func() float64 { return results(reg, "0")["failed"] + results(reg, "1")["failed"] }).Should(Equal(2.0))
		Expect(results(reg, "1")["retried"]).To(Equal(1.0), "a transport error is retried")
		Expect(logs.String()).To(And(
			ContainSubstring("url="+r.URL+"/refusing "), ContainSubstring("status=403"),
			ContainSubstring("url="+closed+"/gone "), ContainSubstring("connection refused"),
		))
		Expect(logs.String()).NotTo(Or(ContainSubstring("hunter2"), ContainSubstring("topsecret")))
	})

	It("sends each webhook only the types it asks for, in order", func() {
		drifts, all := newReceiver(nil), newReceiver(nil)
		n, _ := newNotifier(notify.Options{Webhooks: []notify.Webhook{
			hook(drifts.URL, notify.Drift, notify.Remediated), hook(all.URL),
		}})
		start(n)
		for i, t := range notify.Types {
			n.Notify(notify.Event{Type: t, ID: t, Reason: string(rune('a' + i))})
		}
		Eventually(all.delivered).Should(Equal(notify.Types))
		Expect(drifts.delivered()).To(Equal([]string{notify.Drift, notify.Remediated}))
	})

	It("keeps a hanging receiver from delaying another", func() {
		stuck, fine := newReceiver(func(int) int { return hang }), newReceiver(nil)
		n, reg := newNotifier(notify.Options{Timeout: time.Minute, Webhooks: []notify.Webhook{hook(stuck.URL), hook(fine.URL)}})
		start(n)
		for _, id := range []string{"a", "b", "c"} {
			n.Notify(notify.Event{Type: notify.Orphaned, ID: id})
		}
		Eventually(fine.delivered).Should(Equal([]string{"a", "b", "c"}))
		Eventually(stuck.count).Should(Equal(1))
		Consistently(stuck.count, 50*time.Millisecond).Should(Equal(1), "the stuck worker waits for its first event")
		Expect(value(reg, "blacksmith_webhook_queue_length", map[string]string{"webhook": "0"})).To(Equal(2.0))
		Expect(value(reg, "blacksmith_webhook_queue_length", map[string]string{"webhook": "1"})).To(Equal(0.0))
	})
})

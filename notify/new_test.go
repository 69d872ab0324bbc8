package notify_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/notify"
)

var _ = Describe("New", func() {
	DescribeTable("refuses a bad webhook, naming its field",
		func(w notify.Webhook, want string) {
			_, err := notify.New(notify.Options{Webhooks: []notify.Webhook{hook("https://h.example/ok"), w}})
			Expect(err).To(MatchError(ContainSubstring(want)))
			Expect(err.Error()).NotTo(ContainSubstring("webhooks[0]"), "the good webhook is not blamed")
		},
		Entry("no URL", hook(""), "webhooks[1].url: required"),
		Entry("another scheme", hook("ftp://h.example/x"), "webhooks[1].url: want an http:// or https:// URL"),
		Entry("a relative URL", hook("/hooks"), "webhooks[1].url: want an http:// or https:// URL"),
		Entry("no host", hook("http:///hooks"), "webhooks[1].url: has no host"),
		Entry("a port without host", hook("http://:8080/hooks"), "webhooks[1].url: has no host"),
		Entry("user info", hook("https://user:pw@h.example/x"), "webhooks[1].url: must not hold user info"),
		Entry("a fragment", hook("https://h.example/x#top"), "webhooks[1].url: must not have a fragment"),
		Entry("not a URL", hook("http://h.example:port/"), "webhooks[1].url: not a URL"),
		Entry("an unknown event type", hook("https://h.example/x", notify.Drift, "deleted"),
			`webhooks[1].events[1]: unknown event type "deleted"`),
		Entry("no secret", notify.Webhook{URL: "https://h.example/x"}, "webhooks[1].secret: required"),
	)

	It("reports every problem of every webhook at once", func() {
		_, err := notify.New(notify.Options{Webhooks: []notify.Webhook{
			{URL: "ftp://h.example/x"},
			hook("https://h.example/ok"),
			hook("https://h.example/x", "orphan", notify.Orphaned, "drifted"),
		}})
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(
			ContainSubstring("webhooks[0].url"), ContainSubstring("webhooks[0].secret"),
			ContainSubstring("webhooks[2].events[0]"), ContainSubstring("webhooks[2].events[2]"),
		))
		Expect(err.Error()).NotTo(Or(ContainSubstring("webhooks[1]"), ContainSubstring("webhooks[2].events[1]")))
	})

	It("never quotes a URL's credentials or query in its errors", func() {
		_, err := notify.New(notify.Options{Webhooks: []notify.Webhook{
			hook("ftp://h.example/x?token=hunter2"),
			hook("https://user:hunter2@h.example/x"),
			hook("http://h.example:port/x?token=hunter2"),
			hook("https://h.example/x?token=hunter2#frag"),
		}})
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("webhooks[3].url"))
		Expect(err.Error()).NotTo(ContainSubstring("hunter2"))
	})

	It("refuses negative sizes and durations", func() {
		_, err := notify.New(notify.Options{Attempts: -1})
		Expect(err).To(MatchError(ContainSubstring("must not be negative")))
	})

	It("accepts no webhooks and upper-case schemes", func() {
		n, err := notify.New(notify.Options{})
		Expect(err).NotTo(HaveOccurred())
		n.Notify(notify.Event{Type: notify.Drift})
		_, err = notify.New(notify.Options{Webhooks: []notify.Webhook{hook("HTTPS://h.example/x", notify.Types...)}})
		Expect(err).NotTo(HaveOccurred())
	})
})

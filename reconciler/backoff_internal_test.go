package reconciler

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("backoff", func() {
	DescribeTable("doubles from the base, capped, with jitter between half and all",
		func(attempt int, r float64, want time.Duration) {
			b := backoff{base: time.Second, limit: 10 * time.Second, rand: func() float64 { return r }}
			Expect(b.delay(attempt)).To(Equal(want))
		},
		Entry("first retry, no jitter drawn", 1, 0.0, 500*time.Millisecond),
		Entry("first retry, most jitter", 1, 0.999, 999500*time.Microsecond),
		Entry("second retry", 2, 0.0, time.Second),
		Entry("third retry", 3, 0.5, 3*time.Second),
		Entry("capped", 10, 0.0, 5*time.Second),
		Entry("capped, full", 30, 1.0, 10*time.Second),
	)

	It("retries until success, waiting longer each time", func() {
		var at []time.Time
		err := retry(context.Background(), 3, backoff{base: 20 * time.Millisecond, limit: time.Second}, nil,
			func(context.Context) error {
				at = append(at, time.Now())
				if len(at) < 4 {
					return errors.New("boom")
				}
				return nil
			})
		Expect(err).NotTo(HaveOccurred())
		Expect(at).To(HaveLen(4))
		Expect(at[1].Sub(at[0])).To(BeNumerically(">=", 10*time.Millisecond))
		Expect(at[3].Sub(at[2])).To(BeNumerically(">=", 40*time.Millisecond))
	})

	It("gives up after the retries and returns the last error", func() {
		calls := 0
		err := retry(context.Background(), 2, backoff{base: time.Millisecond, limit: time.Millisecond}, nil,
			func(context.Context) error { calls++; return errors.New("still down") })
		Expect(err).To(MatchError("still down"))
		Expect(calls).To(Equal(3))
	})

	It("does not retry a terminal error", func() {
		calls := 0
		err := retry(context.Background(), 5, backoff{base: time.Millisecond, limit: time.Millisecond}, nil,
			func(context.Context) error { calls++; return terminal(errors.New("gone")) })
		Expect(err).To(MatchError("gone"))
		Expect(calls).To(Equal(1))
	})

	It("stops waiting when the context ends", func() {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		err := retry(ctx, 5, backoff{base: time.Hour, limit: time.Hour}, func(int, error) { cancel() },
			func(context.Context) error { calls++; return errors.New("down") })
		Expect(err).To(MatchError(context.Canceled))
		Expect(calls).To(Equal(1))
	})
})

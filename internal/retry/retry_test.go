package retry_test

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

var _ = Describe("retry", func() {
	DescribeTable("doubles from the base, capped, with jitter between half and all",
		func(attempt int, r float64, want time.Duration) {
			b := retry.Backoff{Base: time.Second, Limit: 10 * time.Second, Rand: func() float64 { return r }}
			Expect(b.Delay(attempt)).To(Equal(want))
		},
		Entry("first retry, no jitter drawn", 1, 0.0, 500*time.Millisecond),
		Entry("first retry, most jitter", 1, 0.999, 999500*time.Microsecond),
		Entry("second retry", 2, 0.0, time.Second),
		Entry("third retry", 3, 0.5, 3*time.Second),
		Entry("capped", 10, 0.0, 5*time.Second),
		Entry("capped, full", 30, 1.0, 10*time.Second),
	)

	DescribeTable("its ceiling doubles from the base up to the limit, without jitter (the quarantine's waits)",
		func(base, limit time.Duration, attempt int, want time.Duration) {
			Expect(retry.Backoff{Base: base, Limit: limit}.Ceiling(attempt)).To(Equal(want))
		},
		Entry("after the first failed run", 15*time.Minute, 24*time.Hour, 1, 15*time.Minute),
		Entry("after the third", 15*time.Minute, 24*time.Hour, 3, time.Hour),
		Entry("capped by the limit", 15*time.Minute, 24*time.Hour, 20, 24*time.Hour),
		Entry("a limit below the base is the base", time.Hour, time.Minute, 2, time.Hour),
	)

	It("retries until success, waiting longer each time", func() {
		var at []time.Time
		err := retry.Do(context.Background(), 3, retry.Backoff{Base: 20 * time.Millisecond, Limit: time.Second}, nil,
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
		err := retry.Do(context.Background(), 2, retry.Backoff{Base: time.Millisecond, Limit: time.Millisecond}, nil,
			func(context.Context) error { calls++; return errors.New("still down") })
		Expect(err).To(MatchError("still down"))
		Expect(calls).To(Equal(3))
	})

	It("does not retry a terminal error", func() {
		calls := 0
		err := retry.Do(context.Background(), 5, retry.Backoff{Base: time.Millisecond, Limit: time.Millisecond}, nil,
			func(context.Context) error { calls++; return retry.Terminal(errors.New("gone")) })
		Expect(err).To(MatchError("gone"))
		Expect(calls).To(Equal(1))
	})

	It("stops waiting when the context ends", func() {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		err := retry.Do(ctx, 5, retry.Backoff{Base: time.Hour, Limit: time.Hour}, func(int, error, time.Duration) { cancel() },
			func(context.Context) error { calls++; return errors.New("down") })
		Expect(err).To(MatchError(context.Canceled))
		Expect(calls).To(Equal(1))
	})

	It("retries until it succeeds when retries is negative", func() {
		calls := 0
		err := retry.Do(context.Background(), -1, retry.Backoff{Base: time.Millisecond, Limit: time.Millisecond}, nil,
			func(context.Context) error {
				calls++
				if calls < 7 {
					return errors.New("not yet")
				}
				return nil
			})
		Expect(err).NotTo(HaveOccurred())
		Expect(calls).To(Equal(7))
	})
})

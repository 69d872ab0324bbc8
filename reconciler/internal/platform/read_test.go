package platform_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
)

// fakeReader is the package's Reader seam: the plans and instances it
// answers, the errors it fails with, what it was asked, and the requests a
// real client would have made (one for the plans, pages for the instances).
type fakeReader struct {
	mu           sync.Mutex
	plans        []cf.Plan
	plansErr     error
	instances    []cf.Instance
	instancesErr error
	pages        int64

	brokers   []string
	planGUIDs [][]string
	requests  atomic.Int64
}

func (f *fakeReader) ServicePlans(_ context.Context, broker string) ([]cf.Plan, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.brokers = append(f.brokers, broker)
	f.requests.Add(1)
	return f.plans, f.plansErr
}

func (f *fakeReader) ServiceInstances(_ context.Context, planGUIDs []string) ([]cf.Instance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.planGUIDs = append(f.planGUIDs, append([]string(nil), planGUIDs...))
	f.requests.Add(max(f.pages, 1))
	return f.instances, f.instancesErr
}

func (f *fakeReader) fail(plans, instances error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plansErr, f.instancesErr = plans, instances
}

// reads is how many times the plans were read (a read starts there).
func (f *fakeReader) reads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.brokers)
}

func (f *fakeReader) count() int64 { return f.requests.Load() }

// clock is a test's time: each call answers the time and moves it on by step.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func twoPlans() *fakeReader {
	return &fakeReader{
		plans: []cf.Plan{{GUID: "pg-small", Name: "small", CatalogID: "small"},
			{GUID: "pg-large", Name: "large", CatalogID: "redis-large"}},
		instances: []cf.Instance{{GUID: "i1", Name: "cache", PlanGUID: "pg-large", SpaceGUID: "sg", SpaceName: "dev",
			OrgGUID: "og", OrgName: "acme", LastOperation: cf.LastOperation{Type: "create", State: "succeeded",
				Description: "done", UpdatedAt: readAt.Add(-time.Hour)}}},
	}
}

var _ = Describe("Read", func() {
	var (
		r   *fakeReader
		clk *clock
		ctx context.Context
	)
	BeforeEach(func() {
		r = twoPlans()
		clk = &clock{t: readAt, step: 250 * time.Millisecond}
		ctx = context.Background()
	})

	It("reads the broker's plans, then every instance of them, mapping each plan GUID to its catalog id", func() {
		r.instances = append(r.instances, cf.Instance{GUID: "i2", Name: "q", PlanGUID: "pg-small"})
		v, err := platform.Read(ctx, r, "redis-broker", clk.now)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.brokers).To(Equal([]string{"redis-broker"}))
		Expect(r.planGUIDs).To(Equal([][]string{{"pg-small", "pg-large"}}))
		Expect(v.ReadAt).To(Equal(readAt), "when the read started")
		Expect(v.Took).To(Equal(250 * time.Millisecond))
		Expect(v.Plans).To(Equal(2))
		Expect(v.Requests).To(BeZero(), "the tracker counts them")
		Expect(v.Instances).To(Equal(map[string]platform.Instance{
			"i1": {Name: "cache", Space: "dev", SpaceGUID: "sg", Org: "acme", PlanID: "redis-large", OpType: "create",
				OpState: "succeeded", UpdatedAt: readAt.Add(-time.Hour)},
			"i2": {Name: "q", PlanID: "small"},
		}))
	})

	It("gives an instance of a plan it did not list no plan id", func() {
		r.instances = []cf.Instance{{GUID: "i9", PlanGUID: "pg-unknown"}}
		v, err := platform.Read(ctx, r, "redis-broker", clk.now)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Instances).To(Equal(map[string]platform.Instance{"i9": {}}))
	})

	It("is a whole view of no instance when the platform has none", func() {
		r.instances = nil
		v, err := platform.Read(ctx, r, "redis-broker", clk.now)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Instances).NotTo(BeNil())
		Expect(v.Instances).To(BeEmpty())
		Expect(v.Plans).To(Equal(2))
	})

	It("refuses a broker the platform lists no plan of, naming it, and reads no instance", func() {
		r.plans = nil
		v, err := platform.Read(ctx, r, "redis-brokr", clk.now)
		Expect(v).To(BeNil())
		Expect(err).To(MatchError(ContainSubstring(`"redis-brokr"`)))
		Expect(err).To(MatchError(ContainSubstring("cf.broker_name")))
		Expect(r.planGUIDs).To(BeEmpty())
	})

	It("wraps the plans' error, naming the broker, and reads no instance", func() {
		boom := errors.New("cloud controller: 502")
		r.fail(boom, nil)
		v, err := platform.Read(ctx, r, "redis-broker", clk.now)
		Expect(v).To(BeNil())
		Expect(err).To(MatchError(boom))
		Expect(err).To(MatchError(ContainSubstring(`"redis-broker"`)))
		Expect(r.planGUIDs).To(BeEmpty())
	})

	It("wraps the instances' error, naming the broker and its plans, and returns no view", func() {
		boom := errors.New("cloud controller: page 3: 500")
		r.fail(nil, boom)
		v, err := platform.Read(ctx, r, "redis-broker", clk.now)
		Expect(v).To(BeNil())
		Expect(err).To(MatchError(boom))
		Expect(err).To(MatchError(ContainSubstring(`broker "redis-broker"'s 2 plans`)))
	})

	It("is a cf.Client's read", func() {
		var _ ports.PlatformReader = (*cf.Client)(nil)
	})
})

var _ = Describe("Transient", func() {
	readFailing := func(plans, instances error) error {
		r := twoPlans()
		r.fail(plans, instances)
		_, err := platform.Read(context.Background(), r, "redis-broker", time.Now)
		Expect(err).To(HaveOccurred())
		return err
	}

	DescribeTable("says a failed read may pass when the platform is unavailable or rate limited",
		func(plans, instances error, transient bool) {
			Expect(platform.Transient(readFailing(plans, instances))).To(Equal(transient))
		},
		Entry("plans: unavailable", fmt.Errorf("cloud controller: GET /v3/service_plans: %w", cf.ErrUnavailable), nil, true),
		Entry("instances: unavailable", nil, fmt.Errorf("page 2: %w", cf.ErrUnavailable), true),
		Entry("plans: a 502", &cf.APIError{Endpoint: "/v3/service_plans", Status: 502}, nil, true),
		Entry("instances: rate limited", nil, &cf.APIError{Endpoint: "/v3/service_instances", Status: 429}, true),
		Entry("instances: ErrRateLimited", nil, fmt.Errorf("x: %w", cf.ErrRateLimited), true),
		Entry("plans: credentials refused", &cf.APIError{Endpoint: "/v3/service_plans", Status: 401}, nil, false),
		Entry("plans: forbidden", fmt.Errorf("uaa: %w", cf.ErrUnauthorized), nil, false),
		Entry("instances: not found", nil, &cf.APIError{Endpoint: "/v3/service_instances", Status: 404}, false),
		Entry("instances: something else", nil, errors.New("refusing to follow a link"), false),
	)

	It("says a broker without plans will not pass", func() {
		r := twoPlans()
		r.plans = nil
		_, err := platform.Read(context.Background(), r, "redis-broker", time.Now)
		Expect(platform.Transient(err)).To(BeFalse())
		Expect(platform.Transient(nil)).To(BeFalse())
	})

	// BUG (read.go, Transient): its doc says "an answer too large is not"
	// transient, but cf's too-large error matches cf.ErrUnavailable too (a
	// view that is unknown), so Transient says true and the run retries a
	// read whose every answer will be as large.
	It("says an answer too large will not pass, as a cf.Client reads it", func() {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(bytes.Repeat([]byte(" "), 1<<20+1)) // over any answer's bound: the root's is 1 MiB
		}))
		DeferCleanup(srv.Close)
		client, err := cf.New(cf.Options{API: srv.URL, ClientID: "blacksmith", ClientSecret: "secret", MaxPageBytes: 1 << 10})
		Expect(err).NotTo(HaveOccurred())
		_, err = platform.Read(context.Background(), client, "redis-broker", time.Now)
		Expect(err).To(MatchError(cf.ErrAnswerTooLarge))
		Expect(platform.Transient(err)).To(BeFalse(), "%v", err)
	})
})

var _ = Describe("Tracker", func() {
	const hour = time.Hour
	var (
		r       *fakeReader
		clk     *clock
		ctx     context.Context
		tracker *platform.Tracker
	)
	BeforeEach(func() {
		r = twoPlans()
		r.pages = 3
		r.requests.Store(40) // the client's requests before the tracker
		clk = &clock{t: readAt}
		ctx = context.Background()
		tracker = platform.NewTracker(r, "redis-broker", hour, r.count)
	})

	read := func(force bool) (*platform.View, bool, int, time.Duration, error) {
		return tracker.Read(ctx, clk.now, force)
	}

	It("reads when it has no view yet, and counts the read's requests", func() {
		Expect(tracker.Last()).To(BeNil())
		v, fresh, requests, _, err := read(false)
		Expect(err).NotTo(HaveOccurred())
		Expect(fresh).To(BeTrue())
		Expect(requests).To(Equal(4), "one for the plans, three pages of instances")
		Expect(v.Requests).To(Equal(4))
		Expect(v.ReadAt).To(Equal(readAt))
		Expect(v.Instances).To(HaveKey("i1"))
		Expect(tracker.Last()).To(BeIdenticalTo(v))
		Expect(r.brokers).To(Equal([]string{"redis-broker"}))
	})

	It("says how long the read took, from before it to after it", func() {
		clk.step = time.Second
		v, _, _, took, err := read(false)
		Expect(err).NotTo(HaveOccurred())
		// now: at (0s), the read's start (1s) and end (2s), then after (3s).
		Expect(took).To(Equal(3 * time.Second))
		Expect(v.ReadAt).To(Equal(readAt.Add(time.Second)))
		Expect(v.Took).To(Equal(time.Second))
	})

	It("returns the last view, not fresh, within the interval, without reading", func() {
		first, _, _, _, err := read(false)
		Expect(err).NotTo(HaveOccurred())
		clk.advance(hour - time.Second)
		v, fresh, requests, took, err := read(false)
		Expect(err).NotTo(HaveOccurred())
		Expect(v).To(BeIdenticalTo(first))
		Expect(fresh).To(BeFalse())
		Expect(requests).To(BeZero())
		Expect(took).To(BeZero())
		Expect(r.reads()).To(Equal(1))
		Expect(v.Requests).To(Equal(4), "the view keeps its own read's requests")
	})

	It("reads again once the interval has passed since the last whole read, the edge included", func() {
		first, _, _, _, _ := read(false)
		clk.advance(hour)
		v, fresh, requests, _, err := read(false)
		Expect(err).NotTo(HaveOccurred())
		Expect(fresh).To(BeTrue())
		Expect(v).NotTo(BeIdenticalTo(first))
		Expect(v.ReadAt).To(Equal(readAt.Add(hour)))
		Expect(requests).To(Equal(4))
		Expect(r.reads()).To(Equal(2))
		Expect(tracker.Last()).To(BeIdenticalTo(v))
	})

	It("reads when forced, within the interval", func() {
		first, _, _, _, _ := read(false)
		clk.advance(time.Minute)
		v, fresh, _, _, err := read(true)
		Expect(err).NotTo(HaveOccurred())
		Expect(fresh).To(BeTrue())
		Expect(v).NotTo(BeIdenticalTo(first))
		Expect(r.reads()).To(Equal(2))

		clk.advance(time.Minute)
		again, fresh, _, _, _ := read(false)
		Expect(again).To(BeIdenticalTo(v), "the interval runs from the forced read")
		Expect(fresh).To(BeFalse())
	})

	It("reads at every call with an interval of 0", func() {
		tracker = platform.NewTracker(r, "redis-broker", 0, r.count)
		for i := range 3 {
			_, fresh, requests, _, err := read(false)
			Expect(err).NotTo(HaveOccurred())
			Expect(fresh).To(BeTrue())
			Expect(requests).To(Equal(4))
			Expect(r.reads()).To(Equal(i + 1))
		}
	})

	It("counts no request without a requests func", func() {
		tracker = platform.NewTracker(r, "redis-broker", hour, nil)
		v, fresh, requests, _, err := read(false)
		Expect(err).NotTo(HaveOccurred())
		Expect(fresh).To(BeTrue())
		Expect(requests).To(BeZero())
		Expect(v.Requests).To(BeZero())
	})

	It("returns the failed read's error, requests and duration, and keeps the last whole view", func() {
		first, _, _, _, _ := read(false)
		clk.advance(2 * hour)
		clk.step = time.Second
		boom := errors.New("cloud controller: 503")
		r.fail(nil, boom)
		v, fresh, requests, took, err := read(false)
		Expect(err).To(MatchError(boom))
		Expect(v).To(BeNil())
		Expect(fresh).To(BeTrue())
		Expect(requests).To(Equal(4), "the failed read's")
		Expect(took).To(Equal(2*time.Second), "at, the read's start, after it: no end")
		Expect(tracker.Last()).To(BeIdenticalTo(first))
	})

	It("retries at the next call after a failed first read", func() {
		r.fail(errors.New("cloud controller: 503"), nil)
		_, _, requests, _, err := read(false)
		Expect(err).To(HaveOccurred())
		Expect(requests).To(Equal(1))
		Expect(tracker.Last()).To(BeNil())

		r.fail(nil, nil)
		clk.advance(time.Second)
		v, fresh, _, _, err := read(false)
		Expect(err).NotTo(HaveOccurred())
		Expect(fresh).To(BeTrue())
		Expect(v.ReadAt).To(Equal(readAt.Add(time.Second)))
		Expect(r.reads()).To(Equal(2))
		Expect(tracker.Last()).To(BeIdenticalTo(v))
	})

	It("retries at the next call after a failed read once the interval has passed", func() {
		read(false)
		clk.advance(hour + time.Minute)
		r.fail(nil, errors.New("cloud controller: 503"))
		_, _, _, _, err := read(false)
		Expect(err).To(HaveOccurred())

		r.fail(nil, nil)
		clk.advance(time.Minute)
		v, fresh, _, _, err := read(false)
		Expect(err).NotTo(HaveOccurred())
		Expect(fresh).To(BeTrue())
		Expect(v.ReadAt).To(Equal(readAt.Add(hour + 2*time.Minute)))
		Expect(r.reads()).To(Equal(3))
	})

	// BUG (tracker.go, Tracker.Read): "read now when due (... the last read
	// failed ...)": after a forced read fails within the interval of the
	// last whole view, the next call returns that view, not fresh, and
	// does not read.
	It("retries at the next call after a failed forced read, within the interval of the last whole view", func() {
		first, _, _, _, _ := read(false)
		clk.advance(time.Minute)
		r.fail(nil, errors.New("cloud controller: 503"))
		_, _, _, _, err := read(true)
		Expect(err).To(HaveOccurred())
		Expect(tracker.Last()).To(BeIdenticalTo(first), "the last whole view stays")

		r.fail(nil, nil)
		clk.advance(time.Minute)
		v, fresh, _, _, err := read(false)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.reads()).To(Equal(3), "the last read failed: read now")
		Expect(fresh).To(BeTrue())
		Expect(v).NotTo(BeIdenticalTo(first))
	})

	It("reads once for calls at the same time within the interval", func() {
		var wg sync.WaitGroup
		views := make([]*platform.View, 8)
		freshes := make([]bool, 8)
		for i := range views {
			wg.Go(func() {
				defer GinkgoRecover()
				v, fresh, _, _, err := tracker.Read(ctx, clk.now, false)
				Expect(err).NotTo(HaveOccurred())
				views[i], freshes[i] = v, fresh
			})
		}
		wg.Wait()
		Expect(r.reads()).To(Equal(1))
		Expect(freshes).To(ContainElement(BeTrue()))
		for _, v := range views {
			Expect(v).To(BeIdenticalTo(tracker.Last()))
		}
		n := 0
		for _, f := range freshes {
			if f {
				n++
			}
		}
		Expect(n).To(Equal(1), "one fresh read, the others its view")
	})
})

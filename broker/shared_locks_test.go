package broker_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// gatedStore holds, once armed, the next read of an instance's credentials
// (the render of a provision or update, made under the instance's lock and
// lease) until release; entered is closed when that read arrives.
type gatedStore struct {
	broker.Store
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	open    chan struct{}
	once    sync.Once
}

// newGatedStore wraps s; defer release, so that a failed spec lets the
// held request end (before its server closes).
func newGatedStore(s broker.Store) *gatedStore {
	return &gatedStore{Store: s, entered: make(chan struct{}), open: make(chan struct{})}
}

func (g *gatedStore) release() { g.once.Do(func() { close(g.open) }) }

func (g *gatedStore) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = true
}

func (g *gatedStore) Secret(ctx context.Context, path string) (map[string]any, bool, error) {
	g.mu.Lock()
	hold := g.armed && strings.HasSuffix(path, "/credentials")
	if hold {
		g.armed = false
		close(g.entered)
	}
	g.mu.Unlock()
	if hold {
		<-g.open
	}
	return g.Store.Secret(ctx, path)
}

// vm is another daemon ("broker VM") on e's Vault mount and Director, with
// SharedLimits; store is what it keeps its records in (e.store, or a
// wrapper of it).
func (e *env) vm(holder string, store broker.Store, tune ...func(*broker.Options)) *env {
	GinkgoHelper()
	opts := broker.Options{
		Catalog: testCatalog(), Directors: []broker.NamedDirector{{Director: e.client, Reader: e.client}}, Store: store,
		Username: brokerUser, Password: brokerPass, Metrics: broker.NewMetrics(prometheus.NewRegistry()),
		Logger: testLogger(), SharedLimits: e.store.Leases, HolderID: holder, RememberDeleted: time.Nanosecond,
	}
	for _, t := range tune {
		t(&opts)
	}
	b, err := broker.New(opts)
	Expect(err).NotTo(HaveOccurred())
	s := httptest.NewServer(b.Handler())
	DeferCleanup(s.Close)
	return &env{store: e.store, director: e.director, client: e.client, broker: b, server: s}
}

// leaseOf reads an instance's lease ("instance-{id}" for a lowercase id).
func leaseOf(e *env, id string) vault.Lease {
	GinkgoHelper()
	l, ok, err := e.store.Leases.ReadLease(context.Background(), "instance-"+id)
	Expect(err).NotTo(HaveOccurred())
	Expect(ok).To(BeTrue(), "the instance's lease was never taken")
	return l
}

var _ = Describe("operations on one instance across brokers sharing one Vault (SharedLimits)", func() {
	const wait = time.Second
	waitFor := func(d time.Duration) func(*broker.Options) {
		return func(o *broker.Options) { o.InstanceLeaseWait = d }
	}
	deprovision := func(e *env, id string) answer {
		return e.request("DELETE", instancePath(id)+"?accepts_incomplete=true&service_id=redis&plan_id=redis-large", nil)
	}
	// updateInFlight starts an update of id on a, whose store g holds it
	// after it took the instance's lease and before it wrote anything; the
	// answer arrives on the channel once g opens.
	updateInFlight := func(a *env, g *gatedStore, id string) chan answer {
		g.arm()
		updated := make(chan answer, 1)
		go func() {
			defer GinkgoRecover()
			updated <- a.request("PATCH", instancePath(id)+"?accepts_incomplete=true",
				map[string]any{"service_id": "redis", "parameters": map[string]any{"instances": 2}})
		}()
		Eventually(g.entered).Should(BeClosed())
		return updated
	}

	It("accept the update in flight on one broker and refuse a deprovision on another with 422 ConcurrencyError", func() {
		e := newEnv()
		gate := newGatedStore(e.store)
		defer gate.release()
		a, b := e.vm("vm-a", gate, waitFor(wait)), e.vm("vm-b", e.store, waitFor(wait))
		a.provisioned("x", "redis-large")
		tasks := e.director.Stats().Tasks

		updated := updateInFlight(a, gate, "x")
		start := time.Now()
		d := deprovision(b, "x")
		Expect(d.Status).To(Equal(http.StatusUnprocessableEntity), d.Raw)
		Expect(d.Body).To(HaveKeyWithValue("error", "ConcurrencyError"))
		Expect(time.Since(start)).To(BeNumerically(">=", wait), "the deprovision waited for the lease")

		gate.release()
		var u answer
		Eventually(updated).Should(Receive(&u))
		Expect(u.Status).To(Equal(http.StatusAccepted), u.Raw)
		Expect(a.record("x").LastOperation.Type).To(Equal("update"))
		b.eventuallyState("x", "succeeded")
		Expect(e.director.Stats().Tasks).To(Equal(tasks+1), "one task: the update's deploy")
		Expect(e.director.Stats().Deployments).To(Equal(1), "the deployment was not deleted")
		Expect(leaseOf(e, "x").Holder).To(BeEmpty(), "released")
	})

	It("renew the lease while an operation outlasts its TTL", func() {
		e := newEnv()
		gate := newGatedStore(e.store)
		defer gate.release()
		short := func(o *broker.Options) { o.InstanceLeaseTTL = 300 * time.Millisecond }
		a, b := e.vm("vm-a", gate, short), e.vm("vm-b", e.store, short, waitFor(wait))
		a.provisioned("r", "redis-large")

		updated := updateInFlight(a, gate, "r")
		d := deprovision(b, "r") // waits 1s, more than 3 TTLs
		Expect(d.Status).To(Equal(http.StatusUnprocessableEntity), d.Raw)
		Expect(d.Body).To(HaveKeyWithValue("error", "ConcurrencyError"))
		Expect(leaseOf(e, "r").Holder).To(Equal("vm-a"))

		gate.release()
		var u answer
		Eventually(updated).Should(Receive(&u))
		Expect(u.Status).To(Equal(http.StatusAccepted), u.Raw)
	})

	It("wait out the lease of a daemon that died holding it (at most its TTL), then proceed", func() {
		e := newEnv()
		a := e.vm("vm-a", e.store) // waits up to the default 5s
		const ttl = 1500 * time.Millisecond
		_, err := e.store.Leases.AcquireLease(context.Background(), "instance-dead", "vm-dead", ttl, time.Now())
		Expect(err).NotTo(HaveOccurred())

		start := time.Now()
		p := a.request("PUT", instancePath("dead")+"?accepts_incomplete=true", provisionBody("redis-large", nil))
		took := time.Since(start)
		Expect(p.Status).To(Equal(http.StatusAccepted), p.Raw)
		Expect(took).To(BeNumerically(">=", ttl-250*time.Millisecond), "it waited for the dead daemon's lease")
		Expect(took).To(BeNumerically("<", ttl+time.Second), "no longer than its TTL")
		Expect(leaseOf(e, "dead").Holder).To(BeEmpty(), "taken over, then released")
		a.eventuallyState("dead", "succeeded")
	})

	It("take no lease for the polls of a running task, and take it for the poll that records the outcome", func() {
		e := newEnv()
		slow, err := sim.New(sim.Options{TaskDuration: 3 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(slow.Close)
		e.director, e.client = slow, newClient(slow.URL())
		a := e.vm("vm-a", e.store)
		a.provision("p", "redis-large", nil)
		before := leaseOf(e, "p").Token
		Eventually(func() int { return a.record("p").LastOperation.TaskID }).ShouldNot(BeZero())
		for range 3 {
			_, state, _ := a.lastOperation("p")
			Expect(state).To(Equal("in progress"))
		}
		Expect(leaseOf(e, "p").Token).To(Equal(before), "no lease write while the task runs")
		a.eventuallyState("p", "succeeded")
		Expect(leaseOf(e, "p").Token).To(Equal(before+2), "taken and released once, to record the outcome")
	})

	It("answer a Vault failure taking the lease with a 500 that keeps Vault's words for the operator", func() {
		e := newEnv(func(o *broker.Options) {
			o.SharedLimits, o.HolderID = failingLeases{}, "vm-a"
		})
		p := e.request("PUT", instancePath("v")+"?accepts_incomplete=true", provisionBody("redis-large", nil))
		Expect(p.Status).To(Equal(http.StatusInternalServerError))
		Expect(p.Body).To(HaveKeyWithValue("description", "could not take the instance's lease; the broker's log has the details"))
		Expect(p.Raw).NotTo(ContainSubstring("sealed"))
		Expect(e.record("v")).To(BeNil())
	})

	It("take no lease for an operation on an unknown instance: it is answered at once and leaves no lease document", func() {
		e := newEnv()
		a := e.vm("vm-a", e.store)
		Expect(a.request("DELETE", instancePath("nobody")+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil).Status).
			To(Equal(http.StatusGone))
		Expect(a.request("PUT", instancePath("nobody")+"/service_bindings/b1", map[string]any{"service_id": "redis", "plan_id": "redis-small"}).Status).
			To(Equal(http.StatusNotFound))
		Expect(a.request("DELETE", instancePath("nobody")+"/service_bindings/b1?service_id=redis&plan_id=redis-small", nil).Status).
			To(Equal(http.StatusGone))
		_, ok, err := e.store.Leases.ReadLease(context.Background(), "instance-nobody")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "no lease document for an id without a record")
	})

	It("is refused without a holder id", func() {
		_, err := broker.New(broker.Options{SharedLimits: failingLeases{}})
		Expect(err).To(MatchError(ContainSubstring("holder id is required")))
	})
})

// failingLeases is a lease store whose Vault is sealed.
type failingLeases struct{}

func (failingLeases) AcquireLease(context.Context, string, string, time.Duration, time.Time) (vault.Lease, error) {
	return vault.Lease{}, errors.Join(vault.ErrSealed, errors.New("vault is sealed"))
}

func (failingLeases) ReleaseLease(context.Context, string, string) error { return vault.ErrSealed }

func (failingLeases) ReadLease(context.Context, string) (vault.Lease, bool, error) {
	return vault.Lease{}, false, vault.ErrSealed
}

func (failingLeases) DeleteLease(context.Context, string, string, time.Time) error {
	return vault.ErrSealed
}

// stalledLeases is a lease store whose renewals cannot reach Vault until
// open is closed (a daemon cut off from Vault, or paused): the first
// acquisition of each lease goes through.
type stalledLeases struct {
	*vault.Leases
	open  chan struct{}
	mu    sync.Mutex
	taken map[string]bool
}

func (s *stalledLeases) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration, now time.Time) (vault.Lease, error) {
	s.mu.Lock()
	first := !s.taken[name]
	s.taken[name] = true
	s.mu.Unlock()
	if !first {
		select {
		case <-s.open:
		default:
			return vault.Lease{}, errors.New("vault unreachable")
		}
	}
	return s.Leases.AcquireLease(ctx, name, holder, ttl, time.Now())
}

var _ = Describe("an operation whose instance's lease another broker took over", func() {
	It("stops before its next write", func() {
		e := newEnv()
		e.provisioned("t-1", "redis-large")
		leases := &stalledLeases{Leases: e.store.Leases, open: make(chan struct{}), taken: map[string]bool{}}
		a := e.vm("vm-a", e.store, func(o *broker.Options) {
			o.SharedLimits, o.InstanceLeaseTTL = leases, 300*time.Millisecond
		})
		// The bind waits for the deployment's VMs long enough for its lease to run out and be taken.
		Expect(e.director.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name/vms", Delay: 1500 * time.Millisecond, Count: 1})).To(Succeed())
		answered := make(chan answer, 1)
		go func() {
			defer GinkgoRecover()
			answered <- a.request("PUT", instancePath("t-1")+"/service_bindings/b-1", map[string]any{"service_id": "redis", "plan_id": "redis-large"})
		}()
		Eventually(func() string {
			l, _, _ := e.store.Leases.ReadLease(context.Background(), "instance-t-1")
			return l.Holder
		}, 2*time.Second, 10*time.Millisecond).Should(Equal("vm-a"), "the bind holds the instance's lease")
		Eventually(func() error {
			_, err := e.store.Leases.AcquireLease(context.Background(), "instance-t-1", "vm-thief", time.Minute, time.Now())
			return err
		}, 2*time.Second, 50*time.Millisecond).Should(Succeed(), "vm-a's lease ran out unrenewed")
		close(leases.open) // vm-a's next renewal finds it taken over

		var got answer
		Eventually(answered, 10*time.Second).Should(Receive(&got))
		Expect(got.Status).NotTo(Equal(http.StatusCreated), got.Raw)
		_, ok, err := e.store.Secret(context.Background(), "t-1/bindings/b-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "no binding written once the lease was lost")
	})
})

package vault_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// shortFailover makes a store give up riding out a failover after 100ms,
// for the specs of an outage that does not end.
func shortFailover(o *vault.Options) { o.FailoverWait = 100 * time.Millisecond }

// answerTimes answers the first n requests whose path holds part with
// status and body, as a node of a cluster without an active node does
// (n < 0: every one), and counts the requests it answered.
func answerTimes(part string, n int64, status int, body string, answered *atomic.Int64) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.Contains(r.URL.Path, part) || (n >= 0 && answered.Load() >= n) {
			return false
		}
		answered.Add(1)
		if status == 0 { // the connection cut, as a node killed mid-request
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return true
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
		return true
	}
}

var _ = Describe("a Vault cluster failing over", func() {
	DescribeTable("a store rides out the answers of a cluster without an active node, and writes once it has one",
		func(status int, body string) {
			srv := server()
			mount := newMount(srv, 2)
			px := newProxy(srv.Addr, mount)
			store := openStore(px.URL(), srv.Token, mount)
			var answered atomic.Int64
			px.setFault(answerTimes("/data/inst-1/credentials", 4, status, body, &answered))

			Expect(store.PutSecret(ctx, "inst-1/credentials", map[string]any{"password": "kept"})).To(Succeed())
			Expect(answered.Load()).To(BeEquivalentTo(4), "every failover answer was retried")
			got, ok, err := store.Secret(ctx, "inst-1/credentials")
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeTrue())
			Expect(got).To(HaveKeyWithValue("password", "kept"))
		},
		Entry("a standby's 429", http.StatusTooManyRequests, `{"errors":[]}`),
		Entry("a standby that lost its active node", http.StatusInternalServerError, `{"errors":["local node not active but active cluster node not found"]}`),
		Entry("a Raft follower asked to write", http.StatusInternalServerError, `{"errors":["1 error occurred:\n\t* node is not the leader\n\n"]}`),
		Entry("a leader that lost its leadership while committing", http.StatusInternalServerError, `{"errors":["1 error occurred:\n\t* leadership lost while committing log\n\n"]}`),
		// vault/request_handling.go (Vault v1.21.1) switchedLockHandleRequest: an
		// active node stepping down, still answering 200 to sys/health (the soak met it).
		Entry("an active node stepping down", http.StatusInternalServerError, `{"errors":["active context canceled after getting state lock"]}`),
		Entry("a sealed node", http.StatusServiceUnavailable, `{"errors":["Vault is sealed"]}`),
		Entry("a balancer without a healthy node", http.StatusServiceUnavailable, `{"errors":["no server is available to handle this request"]}`),
		Entry("a balancer whose node went away", http.StatusBadGateway, ``),
		Entry("a connection cut", 0, ``),
	)

	It("does not retry other errors", func() {
		srv := server()
		mount := newMount(srv, 2)
		px := newProxy(srv.Addr, mount)
		store := openStore(px.URL(), srv.Token, mount)
		var answered atomic.Int64
		px.setFault(answerTimes("/data/inst-1/credentials", -1, http.StatusInternalServerError, `{"errors":["internal error"]}`, &answered))
		Expect(store.PutSecret(ctx, "inst-1/credentials", map[string]any{"password": "x"})).NotTo(Succeed())
		Expect(answered.Load()).To(BeEquivalentTo(1))
	})

	It("gives up after FailoverWait, then fails at once until Vault answers again", func() {
		srv := server()
		mount := newMount(srv, 2)
		px := newProxy(srv.Addr, mount)
		store := openStore(px.URL(), srv.Token, mount, func(o *vault.Options) { o.FailoverWait = 300 * time.Millisecond })
		var answered atomic.Int64
		px.setFault(answerTimes("/data/inst-", -1, http.StatusServiceUnavailable, `{"errors":["no server is available to handle this request"]}`, &answered))

		start := time.Now()
		err := store.PutSecret(ctx, "inst-1/credentials", map[string]any{"password": "x"})
		Expect(err).To(HaveOccurred())
		Expect(time.Since(start)).To(BeNumerically(">=", 300*time.Millisecond))
		Expect(answered.Load()).To(BeNumerically(">", 1))
		first := answered.Load()
		Expect(store.PutSecret(ctx, "inst-2/credentials", map[string]any{"password": "x"})).NotTo(Succeed())
		Expect(answered.Load()).To(Equal(first+1), "the outage is past its wait: one try")

		px.setFault(nil)
		Expect(store.PutSecret(ctx, "inst-3/credentials", map[string]any{"password": "x"})).To(Succeed())
		px.setFault(answerTimes("/data/inst-4", 2, http.StatusServiceUnavailable, `{"errors":["Vault is sealed"]}`, &answered))
		Expect(store.PutSecret(ctx, "inst-4/credentials", map[string]any{"password": "x"})).To(Succeed(), "a new outage waits anew")
	})

	It("does not retry when FailoverWait is negative", func() {
		srv := server()
		mount := newMount(srv, 2)
		px := newProxy(srv.Addr, mount)
		store := openStore(px.URL(), srv.Token, mount, func(o *vault.Options) { o.FailoverWait = -1 })
		var answered atomic.Int64
		px.setFault(answerTimes("/data/inst-1/credentials", -1, http.StatusTooManyRequests, `{"errors":[]}`, &answered))
		err := store.PutSecret(ctx, "inst-1/credentials", map[string]any{"password": "x"})
		Expect(err).To(HaveOccurred())
		Expect(errors.Is(err, vault.ErrNotFound)).To(BeFalse())
		Expect(answered.Load()).To(BeEquivalentTo(1))
	})
})

var _ = Describe("a lease whose write landed as the active node went away", func() {
	It("is taken, not reported held by its own holder, when the retry finds its own write", func() {
		srv := server()
		mount := newMount(srv, 2)
		px := newProxy(srv.Addr, mount)
		store := openStore(px.URL(), srv.Token, mount)
		// The first write of the lease reaches Vault and is committed, but
		// its answer is the one of a leader that lost its leadership.
		cut := landedThenLost(px, srv.Addr, "/leases/op")
		now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		l, err := store.Leases.AcquireLease(ctx, "op", "vm-a", time.Minute, now)
		Expect(err).NotTo(HaveOccurred())
		Expect(cut.Load()).To(BeEquivalentTo(1))
		Expect(l.Holder).To(Equal("vm-a"))
		Expect(l.Token).To(Equal(1), "the version of its own write")
		_, err = store.Leases.AcquireLease(ctx, "op", "vm-b", time.Minute, now.Add(time.Second))
		Expect(err).To(MatchError(vault.ErrLeaseHeld))
	})
})

var _ = Describe("a check-and-set write whose first try landed as the active node went away", func() {
	It("is the write's success when the retry finds its own data, and still a conflict when it finds another's", func() {
		srv := server()
		mount := newMount(srv, 2)
		px := newProxy(srv.Addr, mount)
		store := openStore(px.URL(), srv.Token, mount)
		// The first write of each secret reaches Vault and is committed,
		// but its answer is the one of a leader that lost its leadership.
		cut := landedThenLost(px, srv.Addr, "/credentials")
		creds := map[string]any{"password": "s3cret", "port": 6379, "hosts": []any{"10.0.0.1"}}
		Expect(store.CreateSecret(ctx, "inst-1/credentials", creds)).To(Succeed(), "its own write, found by the retry")
		Expect(cut.Load()).To(BeEquivalentTo(1))
		got, ok, err := store.Secret(ctx, "inst-1/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(got).To(HaveKeyWithValue("password", "s3cret"))

		// Another's data there: the create is refused, as without a failover.
		Expect(store.CreateSecret(ctx, "inst-1/credentials", map[string]any{"password": "other"})).To(MatchError(vault.ErrConflict))
		got, _, err = store.Secret(ctx, "inst-1/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveKeyWithValue("password", "s3cret"), "nothing overwritten")
	})
})

// landedThenLost makes the first write through px to a path holding part
// reach Vault (at addr) and be committed, then answers it as a leader that
// lost its leadership while committing; the counter is 1 once it did.
func landedThenLost(px *proxy, addr, part string) *atomic.Int64 {
	GinkgoHelper()
	target, err := url.Parse(addr)
	Expect(err).NotTo(HaveOccurred())
	vaultProxy := httputil.NewSingleHostReverseProxy(target)
	var cut atomic.Int64
	px.setFault(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet || !strings.Contains(r.URL.Path, part) || !cut.CompareAndSwap(0, 1) {
			return false
		}
		vaultProxy.ServeHTTP(httptest.NewRecorder(), r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"errors":["1 error occurred:\n\t* leadership lost while committing log\n\n"]}`))
		return true
	})
	return &cut
}

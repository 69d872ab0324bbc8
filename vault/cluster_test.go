package vault_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/internal/vaultcluster"
	"github.com/blacksmith-reconciler/blacksmith/internal/vaultserver"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// longClusterSpecs says whether the longer cluster specs run: they are out
// of `make test` unless BLACKSMITH_CLUSTER_SPECS=all.
func longClusterSpecs() {
	if os.Getenv("BLACKSMITH_CLUSTER_SPECS") != "all" {
		Skip("a longer cluster spec: BLACKSMITH_CLUSTER_SPECS=all runs it")
	}
}

// startVaultCluster starts a three-node Raft cluster for the container,
// skipping outside CI without a Vault binary that runs from a configuration
// file.
func startVaultCluster() *vaultcluster.Cluster {
	GinkgoHelper()
	start, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := vaultcluster.Start(start, vaultcluster.Options{})
	if (errors.Is(err, vaultserver.ErrNoBinary) || errors.Is(err, vaultcluster.ErrNoConfigMode)) && !testvault.InCI() {
		Skip(err.Error())
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(c.Close)
	return c
}

// writer writes a record and a secret per round through store until
// stopped, and keeps every error and every id written.
type writer struct {
	store  *vault.Store
	prefix string
	stop   chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	errs    []error
	written []string
}

// startWriter starts writing; rounds are 20ms apart.
func startWriter(store *vault.Store, prefix string) *writer {
	w := &writer{store: store, prefix: prefix, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			id := fmt.Sprintf("%s-%d", w.prefix, i)
			rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, err := w.store.Update(rctx, map[string]vault.Change{id: put(rec("svc", "p"))})
			if err == nil {
				err = w.store.PutSecret(rctx, id+"/credentials", map[string]any{"password": id})
			}
			cancel()
			w.mu.Lock()
			if err != nil {
				w.errs = append(w.errs, err)
			} else {
				w.written = append(w.written, id)
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// count is the number of rounds written.
func (w *writer) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.written)
}

// finish stops the writer and returns its errors and the ids written.
func (w *writer) finish() ([]error, []string) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.errs, w.written
}

// expectKept checks every id written has its record and its secret.
func expectKept(store *vault.Store, ids []string) {
	GinkgoHelper()
	idx, err := store.Index(ctx)
	Expect(err).NotTo(HaveOccurred())
	for _, id := range ids {
		Expect(idx.Records).To(HaveKey(id))
		got, ok, err := store.Secret(ctx, id+"/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue(), id)
		Expect(got).To(HaveKeyWithValue("password", id))
	}
}

var _ = Describe("the store on a Vault cluster with Raft storage", Ordered, func() {
	var c *vaultcluster.Cluster

	BeforeAll(func() { c = startVaultCluster() })

	It("keeps writing through the balancer, without an error, while the active node is killed", func(sctx SpecContext) {
		store := openStore(c.Addr(), c.Token, "secret")
		w := startWriter(store, "kill")
		Eventually(w.count).WithTimeout(30 * time.Second).Should(BeNumerically(">=", 5))
		old, err := c.Active(sctx)
		Expect(err).NotTo(HaveOccurred())
		old.Kill()
		Eventually(func() bool { n, err := c.Active(sctx); return err == nil && n != old }).WithTimeout(time.Minute).Should(BeTrue())
		after := w.count()
		Eventually(w.count).WithTimeout(time.Minute).Should(BeNumerically(">=", after+10))
		errs, ids := w.finish()
		Expect(errs).To(BeEmpty())
		expectKept(store, ids)
		Expect(c.Restart(sctx, old)).To(Succeed())
	}, SpecTimeout(3*time.Minute))

	It("keeps writing through one standby, without a balancer, while the active node is killed", func(sctx SpecContext) {
		longClusterSpecs()
		active, err := c.WaitActive(sctx)
		Expect(err).NotTo(HaveOccurred())
		standby := c.Nodes[0]
		if standby == active {
			standby = c.Nodes[1]
		}
		store := openStore(standby.Addr, c.Token, "secret")
		w := startWriter(store, "standby")
		Eventually(w.count).WithTimeout(30 * time.Second).Should(BeNumerically(">=", 5))
		active.Kill()
		Eventually(func() bool { n, err := c.Active(sctx); return err == nil && n != active }).WithTimeout(time.Minute).Should(BeTrue())
		after := w.count()
		Eventually(w.count).WithTimeout(time.Minute).Should(BeNumerically(">=", after+10))
		errs, ids := w.finish()
		Expect(errs).To(BeEmpty())
		expectKept(store, ids)
		Expect(c.Restart(sctx, active)).To(Succeed())
	}, SpecTimeout(3*time.Minute))

	It("keeps writing, without an error, while the whole cluster is restarted from disk", func(sctx SpecContext) {
		store := openStore(c.Addr(), c.Token, "secret")
		w := startWriter(store, "restart")
		Eventually(w.count).WithTimeout(30 * time.Second).Should(BeNumerically(">=", 5))
		Expect(c.RestartAll(sctx)).To(Succeed())
		after := w.count()
		Eventually(w.count).WithTimeout(time.Minute).Should(BeNumerically(">=", after+10))
		errs, ids := w.finish()
		Expect(errs).To(BeEmpty())
		expectKept(store, ids)
		expectKept(store, []string{"kill-0", "kill-1"})
	}, SpecTimeout(3*time.Minute))

	It("keeps its token renewed across the kill of the active node", func(sctx SpecContext) {
		longClusterSpecs()
		status, body, err := c.Do(sctx, c.Addr(), http.MethodPost, "/v1/auth/token/create",
			`{"policies":["root"],"ttl":"6s","explicit_max_ttl":"10m","renewable":true}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(http.StatusOK), string(body))
		var created struct {
			Auth struct {
				ClientToken string `json:"client_token"`
			} `json:"auth"`
		}
		Expect(json.Unmarshal(body, &created)).To(Succeed())
		store := openStore(c.Addr(), created.Auth.ClientToken, "secret")
		active, err := c.WaitActive(sctx)
		Expect(err).NotTo(HaveOccurred())
		active.Kill()
		Eventually(func() bool { n, err := c.Active(sctx); return err == nil && n != active }).WithTimeout(time.Minute).Should(BeTrue())
		Consistently(func() error { _, _, err := store.Secret(sctx, "renewal/credentials"); return err }).
			WithTimeout(15*time.Second).WithPolling(500*time.Millisecond).Should(Succeed(), "the 6s token outlives the election")
		Expect(store.Stats().Renewals).To(BeNumerically(">=", 2))
		Expect(c.Restart(sctx, active)).To(Succeed())
	}, SpecTimeout(3*time.Minute))
})

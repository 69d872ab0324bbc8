package vaultcluster_test

import (
	"context"
	"errors"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/internal/vaultcluster"
	"github.com/blacksmith-reconciler/blacksmith/internal/vaultserver"
)

// startCluster starts a three-node cluster for the spec, skipping outside CI
// when there is no Vault binary or only one without the configuration-file
// mode; the cluster is closed when the spec ends.
func startCluster(ctx context.Context) *vaultcluster.Cluster {
	start, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c, err := vaultcluster.Start(start, vaultcluster.Options{})
	if (errors.Is(err, vaultserver.ErrNoBinary) || errors.Is(err, vaultcluster.ErrNoConfigMode)) && !testvault.InCI() {
		Skip(err.Error())
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(c.Close)
	return c
}

// secret reads secret/data/<name>'s "v" through base, "" when it cannot.
func secret(ctx context.Context, c *vaultcluster.Cluster, base, name string) string {
	status, body, err := c.Do(ctx, base, http.MethodGet, "/v1/secret/data/"+name, "")
	if err != nil || status != http.StatusOK {
		return ""
	}
	return string(body)
}

var _ = Describe("a Vault cluster on loopback", Ordered, func() {
	var c *vaultcluster.Cluster

	BeforeAll(func(ctx SpecContext) {
		c = startCluster(context.WithoutCancel(ctx))
	})

	It("has one active node, the balancer's target, and two standbys that forward", func(ctx SpecContext) {
		active, err := c.Active(ctx)
		Expect(err).NotTo(HaveOccurred())
		Eventually(c.Balancer.Target).WithTimeout(10 * time.Second).Should(BeIdenticalTo(active))
		for _, n := range c.Nodes {
			if n != active {
				Expect(n.Health(ctx, 5*time.Second)).To(Equal(http.StatusTooManyRequests), n.ID)
			}
		}
		standby := c.Nodes[0]
		if standby == active {
			standby = c.Nodes[1]
		}
		status, body, err := c.Do(ctx, standby.Addr, http.MethodPut, "/v1/secret/data/forwarded", `{"data":{"v":"through-a-standby"}}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(http.StatusOK), string(body))
		Expect(secret(ctx, c, c.Addr(), "forwarded")).To(ContainSubstring("through-a-standby"))
	}, SpecTimeout(time.Minute))

	It("elects another active node when the active one is killed, and the balancer follows it", func(ctx SpecContext) {
		status, _, err := c.Do(ctx, c.Addr(), http.MethodPut, "/v1/secret/data/before-kill", `{"data":{"v":"kept"}}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(http.StatusOK))
		old, err := c.Active(ctx)
		Expect(err).NotTo(HaveOccurred())
		old.Kill()
		var next *vaultcluster.Node
		Eventually(func() error { next, err = c.Active(ctx); return err }).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Expect(next).NotTo(BeIdenticalTo(old))
		Eventually(c.Balancer.Target).WithTimeout(10 * time.Second).Should(BeIdenticalTo(next))
		Eventually(func() string { return secret(ctx, c, c.Addr(), "before-kill") }).WithTimeout(30 * time.Second).Should(ContainSubstring("kept"))
		Expect(c.Restart(ctx, old)).To(Succeed())
		Expect(old.Health(ctx, 5*time.Second)).To(Equal(http.StatusTooManyRequests))
	}, SpecTimeout(2*time.Minute))

	It("keeps every record when the whole cluster is restarted from disk", func(ctx SpecContext) {
		status, _, err := c.Do(ctx, c.Addr(), http.MethodPut, "/v1/secret/data/before-restart", `{"data":{"v":"on-disk"}}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(http.StatusOK))
		pids := map[int]bool{}
		for _, n := range c.Nodes {
			pids[n.Pid()] = true
		}
		Expect(c.RestartAll(ctx)).To(Succeed())
		for _, n := range c.Nodes {
			Expect(pids).NotTo(HaveKey(n.Pid()), n.ID+" is a new process")
		}
		Eventually(func() string { return secret(ctx, c, c.Addr(), "before-restart") }).WithTimeout(30 * time.Second).Should(ContainSubstring("on-disk"))
		Expect(secret(ctx, c, c.Addr(), "before-kill")).To(ContainSubstring("kept"))
	}, SpecTimeout(2*time.Minute))

	It("seals a standby alone, leaving the active node serving, and unseals it", func(ctx SpecContext) {
		active, err := c.WaitActive(ctx)
		Expect(err).NotTo(HaveOccurred())
		standby := c.Nodes[0]
		if standby == active {
			standby = c.Nodes[1]
		}
		Eventually(func() int { return standby.Health(ctx, time.Second) }).WithTimeout(30 * time.Second).Should(Equal(http.StatusTooManyRequests))
		Expect(c.Seal(ctx, standby)).To(Succeed())
		Expect(standby.Health(ctx, 5*time.Second)).To(Equal(http.StatusServiceUnavailable))
		Expect(active.Health(ctx, 5*time.Second)).To(Equal(http.StatusOK))
		Expect(c.Balancer.Target()).To(BeIdenticalTo(active))
		Expect(c.Unseal(ctx, standby)).To(Succeed())
		Eventually(func() int { return standby.Health(ctx, time.Second) }).WithTimeout(30 * time.Second).Should(Equal(http.StatusTooManyRequests))
	}, SpecTimeout(time.Minute))
})

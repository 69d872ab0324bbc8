package reconciler_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("an instance whose plan was changed by the broker", func() {
	It("keeps the plan its manifest names, though its name still says the old one, and restores it and the broker fields after a loss", func() {
		e := newEnv(envOptions{})
		name := e.sim.SeedDeployments(1, sim.DefaultSeedPlans()[:1])[0]
		Expect(name).To(HavePrefix("redis-small-"))
		id := instanceID(name)
		e.run(report.RunOptions{})
		Expect(e.index()[id].PlanID).To(Equal("redis-small"))

		// What the broker does on an update to redis-large: the record's plan,
		// the manifest in Vault, then the deploy (the deployment keeps its name).
		// The broker's manifest also carries the instance's broker fields.
		updated := strings.Replace(e.manifest(name), "plan_id: redis-small", "plan_id: redis-large", 1)
		Expect(updated).To(HaveSuffix("instance_id: " + id + "\n"))
		updated += "    organization_guid: org-9\n    space_guid: space-9\n    parameters: {size: 3}\n"
		_, err := e.store.Update(context.Background(), map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
			cur.PlanID = "redis-large"
			return cur, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(e.store.PutManifest(context.Background(), id, updated)).To(Succeed())
		Expect(e.sim.PutDeployment(updated)).To(Succeed())

		s := e.run(report.RunOptions{Force: true})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Drift).To(BeZero(), "the broker wrote the manifest it deployed")
		Expect(e.index()[id].PlanID).To(Equal("redis-large"), "the plan is not turned back to the name's")
		Expect(e.run(report.RunOptions{Force: true}).Writes).To(BeZero())

		e.wipeIndex()
		Expect(e.run(report.RunOptions{Force: true}).Created).To(Equal(1))
		Expect(e.index()[id]).To(SatisfyAll(HaveField("PlanID", "redis-large"), HaveField("ServiceID", "redis"),
			HaveField("OrganizationGUID", "org-9"), HaveField("SpaceGUID", "space-9"),
			HaveField("Parameters", HaveKeyWithValue("size", WithTransform(func(v any) string { return fmt.Sprint(v) }, Equal("3"))))), "broker fields found in the manifest")
	})
})

var _ = Describe("two deployments that claim one instance", func() {
	It("leave the instance to the one named {planID}-{instanceID}, whichever is fetched first", func() {
		e := newEnv(envOptions{seed: 1, sim: sim.Options{Latency: 20 * time.Millisecond}, config: func(c *config.ReconcilerConfig) {
			c.MaxConcurrency = 2
		}})
		name, id := e.names[0], instanceID(e.names[0])
		copied := strings.Replace(e.manifest(name), "name: "+name, "name: a-copy", 1)
		Expect(copied).To(ContainSubstring("instance_id: " + id))
		Expect(e.sim.PutDeployment(copied)).To(Succeed())

		for range 3 {
			s := e.run(report.RunOptions{Force: true})
			Expect(s.Errors).To(BeEmpty())
			Expect(e.index()[id].DeploymentName).To(Equal(name))
			Expect(e.m.Status().Unmatched).To(ConsistOf(report.Unmatched{
				Deployment: "a-copy", Reason: "instance " + id + " is already matched by deployment " + name}))
		}
	})
})

var _ = Describe("an instance the broker is working on", func() {
	It("is left alone while the broker's operation is in progress, even before the Director locks the deployment", func() {
		e := newEnv(envOptions{seed: 1})
		e.run(report.RunOptions{})
		name, id := e.names[0], instanceID(e.names[0])
		old := e.manifest(name)
		updated := strings.Replace(old, "max_in_flight: 1", "max_in_flight: 2", 1)
		Expect(updated).NotTo(Equal(old))

		// The broker has recorded its update and stored the new manifest; the
		// Director has not started the deploy yet.
		op := &vault.Operation{Type: "update", State: "in progress", TaskID: 99}
		_, err := e.store.Update(context.Background(), map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
			cur.LastOperation = op
			return cur, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(e.store.PutManifest(context.Background(), id, updated)).To(Succeed())

		s := e.run(report.RunOptions{Force: true})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Busy).To(Equal(1))
		Expect(s.Matched).To(Equal(1))
		Expect(s.ManifestsFetched).To(BeZero(), "its name tells the instance: nothing is fetched")
		Expect(s.Drift).To(BeZero())
		Expect(s.Writes).To(BeZero())
		text, _, err := e.store.Manifest(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(Equal(updated), "the broker's manifest is not turned back to the one still deployed")
		Expect(e.index()[id].Orphaned).To(BeFalse())

		// The deploy ran and the broker recorded its end.
		Expect(e.sim.PutDeployment(updated)).To(Succeed())
		_, err = e.store.Update(context.Background(), map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
			cur.LastOperation.State = "succeeded"
			return cur, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		s = e.run(report.RunOptions{Force: true})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Busy).To(BeZero())
		Expect(s.Drift).To(BeZero(), "what runs is what the broker deployed")
	})
})

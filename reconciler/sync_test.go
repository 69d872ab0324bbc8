package reconciler_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("a run against the simulator and a real Vault", func() {
	It("creates every instance's records, then a second unchanged run writes nothing and fetches no manifest", func() {
		e := newEnv(envOptions{seed: 7})
		readsBefore := e.store.Stats().Reads
		first := e.run(report.RunOptions{})
		coldReads := e.store.Stats().Reads - readsBefore
		// The index (absent), one listing of the mount, and the index layout and
		// shards the batch changed (13 here); no instance's metadata or manifest,
		// since Vault held none: reading them would be 14 more (and 7 more to keep
		// a manifest document's other keys). Plus the quarantine document, the
		// event feed's mark, the health document and the run log's listing (to
		// prune it).
		Expect(coldReads).To(BeNumerically("<=", 19), "cold-run Vault reads")
		Expect(first.Errors).To(BeEmpty())
		Expect(first).To(haveCounts(7, 7, 0))
		Expect(first.ManifestsFetched).To(Equal(7))
		Expect(first.Backups).To(BeZero(), "nothing existed, so nothing to back up")
		Expect(e.sim.Stats().Tasks).To(BeZero(), "no task: never a format=full VM listing")
		Expect(first.Converged).To(BeFalse())

		idx := e.index()
		Expect(idx).To(HaveLen(7))
		for _, name := range e.names {
			rec := idx[instanceID(name)]
			Expect(rec).NotTo(BeNil(), name)
			Expect(rec.DeploymentName).To(Equal(name))
			Expect(name).To(HavePrefix(rec.PlanID + "-"))
			Expect(rec.ServiceID).To(BeElementOf("redis", "postgresql"))
			Expect(rec.Fingerprint).NotTo(BeEmpty())
			text, ok, err := e.store.Manifest(context.Background(), instanceID(name))
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeTrue())
			Expect(text).To(Equal(e.manifest(name)))
			md, err := e.store.Documents.Metadata(context.Background(), instanceID(name))
			Expect(err).NotTo(HaveOccurred())
			Expect(md.VMs).NotTo(BeEmpty())
			Expect(md.Releases).NotTo(BeEmpty())
			Expect(md.History).To(ContainElement(HaveField("Action", "created")))
		}

		e.sim.ResetStats()
		writes := e.vaultWrites()
		before := e.store.Stats()
		second := e.run(report.RunOptions{})
		after := e.store.Stats()
		Expect(second.Errors).To(BeEmpty())
		Expect(second.Writes).To(BeZero())
		Expect(second.ManifestsFetched).To(BeZero())
		Expect(second.Matched).To(Equal(7))
		Expect(second.Converged).To(BeTrue())
		Expect(e.vaultWrites()).To(Equal(writes+1), "no Vault write but the run log's entry (the feed's mark did not move)")
		Expect(e.sim.Stats().Requests).To(Equal(map[string]int{"GET /deployments": 1, "GET /events": 1, "GET /tasks": 1}),
			"three Director requests: the listing, one page of events, the task feed")
		Expect(e.sim.Stats().Tasks).To(BeZero())
		Expect(e.m.Status().Converged).To(BeTrue())

		// The third run reads no index shard it read in the second: their
		// metadata say they are unchanged (the cold run read none: there
		// were none).
		held := map[int]bool{}
		for id := range idx {
			held[vault.ShardOf(id, vault.DefaultShards)] = true
		}
		dataReads := func(from, to vault.Stats) uint64 { return (to.Reads - to.Checks) - (from.Reads - from.Checks) }
		third := e.run(report.RunOptions{})
		last := e.store.Stats()
		Expect(third.Errors).To(BeEmpty())
		Expect(third.Matched).To(Equal(7))
		Expect(after.Checks - before.Checks).To(BeZero())
		Expect(last.Checks-after.Checks).To(Equal(uint64(len(held))), "a metadata read for each shard that holds a record")
		Expect(dataReads(after, last)).To(Equal(dataReads(before, after)-uint64(len(held))), "in place of reading them")
	})

	It("starts a run from the index the run before read, kept even when that run's Director listing failed", func() {
		e := newEnv(envOptions{seed: 5})
		e.run(report.RunOptions{}) // cold: the index it read was empty
		e.run(report.RunOptions{}) // reads every shard, and keeps them
		// Another writer changes a record: its shard's version moves on.
		id := instanceID(e.names[0])
		_, err := e.store.Update(context.Background(), map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
			cur.OrganizationGUID = "org-of-another-writer"
			return cur, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		// A run whose listing fails, after its index read.
		Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments", Status: 500, Delay: 300 * time.Millisecond})).To(Succeed())
		failed, _ := e.m.RunOnce(context.Background(), report.RunOptions{})
		Expect(failed.Errors).NotTo(BeEmpty())
		e.sim.Faults().Clear()

		dataReads := func() uint64 {
			st := e.store.Stats()
			return st.Reads - st.Checks
		}
		before := dataReads()
		e.run(report.RunOptions{})
		next := dataReads() - before
		before = dataReads()
		e.run(report.RunOptions{})
		Expect(next).To(Equal(dataReads()-before), "the changed shard was read by the failed run: no read more than a run after an unchanged one")
	})

	It("matches by manifest metadata, fetching the VMs after the manifest, and leaves a second claim on an instance unmatched", func() {
		e := newEnv(envOptions{config: func(c *config.ReconcilerConfig) { c.MaxConcurrency = 1 }})
		for _, name := range []string{"cache-a", "cache-b"} {
			Expect(e.sim.PutDeployment("name: " + name + `
releases: [{name: redis, version: "16.1.0"}]
stemcells: [{alias: default, os: ubuntu-jammy, version: "1.506"}]
instance_groups:
- name: redis
  instances: 2
  azs: [z1]
  jobs: [{name: redis, release: redis}]
  vm_type: small
  stemcell: default
  networks: [{name: services}]
  properties:
    blacksmith: {service_id: redis, plan_id: redis-small, instance_id: ` + strayID + `}
`)).To(Succeed())
		}
		s := e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s).To(haveCounts(2, 1, 1))
		Expect(e.index()).To(HaveKeyWithValue(strayID, HaveField("DeploymentName", "cache-a")))
		md, err := e.store.Documents.Metadata(context.Background(), strayID)
		Expect(err).NotTo(HaveOccurred())
		Expect(md.VMs).To(HaveLen(2))
		Expect(md.Stemcells).To(ConsistOf(HaveField("Name", "ubuntu-jammy")))
		Expect(e.m.Status().Unmatched).To(ConsistOf(report.Unmatched{
			Deployment: "cache-b", Reason: "instance " + strayID + " is already matched by deployment cache-a"}))
	})

	It("logs each matcher decision at debug level, with its strategy and confidence or the reasons", func() {
		e := newEnv(envOptions{seed: 1})
		Expect(e.sim.PutDeployment("name: cf\nreleases: [{name: capi, version: '1'}]\n")).To(Succeed())
		e.run(report.RunOptions{})
		logs := string(e.logs.Contents())
		Expect(logs).To(MatchRegexp(`level=DEBUG msg="deployment matched" .*deployment=%s instance=%s strategy=name confidence=0.9`,
			e.names[0], instanceID(e.names[0])))
		Expect(logs).To(MatchRegexp(`level=DEBUG msg="deployment unmatched" .*deployment=cf reason="name: no trailing instance UUID; metadata: no properties.blacksmith;`))
	})

	It("fetches a manifest again once its cached answer is older than cache_ttl, when the event feed cannot vouch for it", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) { c.CacheTTL = 2 * time.Second }})
		Expect(e.run(report.RunOptions{}).ManifestsFetched).To(Equal(2))
		Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /events"})).To(Succeed())
		first := e.run(report.RunOptions{})
		Expect(first.Feed.Mode).To(Equal(report.FeedFallback))
		Expect(first.ManifestsFetched).To(BeZero(), "within the TTL")
		// The two entries expire 2 s after each was fetched: one run may see one of them expired.
		fetched := 0
		Eventually(func() int {
			fetched += e.run(report.RunOptions{}).ManifestsFetched
			return fetched
		}, 10*time.Second, 250*time.Millisecond).Should(Equal(2))
	})

	It("restores a wiped index from BOSH with the same ids, keeping broker fields found in a backup", func() {
		e := newEnv(envOptions{seed: 5})
		e.run(report.RunOptions{})
		before := e.index()
		keep := instanceID(e.names[0])
		_, err := e.store.Update(context.Background(), map[string]vault.Change{keep: func(cur *vault.Record) (*vault.Record, error) {
			cur.OrganizationGUID, cur.SpaceGUID = "org-1", "space-1"
			return cur, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		_, err = e.store.Backup(context.Background(), keep)
		Expect(err).NotTo(HaveOccurred())

		e.wipeIndex()
		s := e.run(report.RunOptions{Force: true})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Created).To(Equal(5))

		after := e.index()
		Expect(after).To(HaveLen(len(before)))
		for id, rec := range before {
			Expect(after).To(HaveKey(id))
			Expect(after[id].ServiceID).To(Equal(rec.ServiceID))
			Expect(after[id].PlanID).To(Equal(rec.PlanID))
			Expect(after[id].DeploymentName).To(Equal(rec.DeploymentName))
		}
		Expect(after[keep].OrganizationGUID).To(Equal("org-1"))
		Expect(after[keep].SpaceGUID).To(Equal("space-1"))
		md, err := e.store.Documents.Metadata(context.Background(), keep)
		Expect(err).NotTo(HaveOccurred())
		Expect(md.History).To(ContainElement(HaveField("Action", "restored")))

		Expect(e.run(report.RunOptions{}).Writes).To(BeZero(), "restored records are in step")
	})

	It("records drift in the history and counts it, after a backup of the old records", func() {
		e := newEnv(envOptions{seed: 3})
		e.run(report.RunOptions{})
		name := e.names[1]
		id := instanceID(name)
		old := e.manifest(name)
		changed := strings.Replace(old, "max_in_flight: 1", "max_in_flight: 2", 1)
		Expect(changed).NotTo(Equal(old))
		Expect(e.sim.PutDeployment(changed)).To(Succeed())
		md, err := e.store.Documents.Metadata(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())
		md.Properties = map[string]any{"team": "cache"} // a field the reconciler does not own
		Expect(e.store.Documents.PutMetadata(context.Background(), id, md)).To(Succeed())
		before, err := e.store.Record(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())

		// The listing entry is the same and the cached copy young: only the
		// Director's event feed tells the next scheduled run.
		s := e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Feed).To(And(HaveField("Mode", report.FeedWatch), HaveField("Changed", 1)))
		Expect(s.Drift).To(Equal(1))
		Expect(s.Backups).To(Equal(1))
		Expect(s.Updated).To(Equal(1))
		Expect(s.ManifestsFetched).To(Equal(1), "only the deployment the feed named")
		Expect(e.run(report.RunOptions{Force: true}).Drift).To(BeZero())

		text, _, err := e.store.Manifest(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(Equal(changed))
		md, err = e.store.Documents.Metadata(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())
		Expect(md.History).To(ContainElement(SatisfyAll(
			HaveField("Action", "drift"), HaveField("ManifestSHA256", sha256Hex(changed)))))
		Expect(md.History).To(ContainElement(HaveField("Action", "created")), "the history is kept")
		Expect(md.Properties).To(HaveKeyWithValue("team", "cache"), "fields the reconciler does not own are kept")

		backups, err := e.store.Backups(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())
		Expect(backups).To(HaveLen(1))
		doc, ok, err := e.store.Secret(context.Background(), id+"/backups/"+backups[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(doc["manifest"]).To(Equal(old), "the backup holds the records as they were before the change")
		Expect(doc["metadata"]).To(HaveKeyWithValue("properties", HaveKeyWithValue("team", "cache")))
		Expect(doc["record"]).To(HaveKeyWithValue("reconciler_fingerprint", before.Fingerprint))
		after, err := e.store.Record(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())
		Expect(after.Fingerprint).NotTo(Equal(before.Fingerprint))
		for _, other := range []string{e.names[0], e.names[2]} {
			b, err := e.store.Backups(context.Background(), instanceID(other))
			Expect(err).NotTo(HaveOccurred())
			Expect(b).To(BeEmpty(), "no backup for an instance that did not change")
		}
		Expect(counter(e.reg, "blacksmith_reconciler_drift_total", nil)).To(Equal(1.0))
	})

	It("makes a dry run that computes the plan and writes nothing", func() {
		e := newEnv(envOptions{seed: 4})
		writes := e.vaultWrites()
		s := e.run(report.RunOptions{DryRun: true})
		Expect(s.Errors).To(BeEmpty())
		Expect(e.vaultWrites()).To(Equal(writes))
		Expect(e.index()).To(BeEmpty())
		Expect(s.Writes).To(BeZero())
		Expect(s.Plan).NotTo(BeNil())
		Expect(s.Plan.Creates).To(HaveLen(4))
		Expect(s.Plan.Creates[0].Records).To(ConsistOf("index", "metadata", "manifest"))
		Expect(s.Plan.Backups).To(BeEmpty())
		Expect(s.Converged).To(BeFalse())

		e.run(report.RunOptions{})
		gone, drifted := e.names[0], e.names[1]
		e.sim.RemoveDeployment(gone)
		Expect(e.sim.PutDeployment(strings.Replace(e.manifest(drifted), "canaries: 1", "canaries: 2", 1))).To(Succeed())
		writes = e.vaultWrites()
		s = e.run(report.RunOptions{DryRun: true, Force: true})
		Expect(e.vaultWrites()).To(Equal(writes))
		Expect(s.Plan.Orphans).To(ConsistOf(report.PlanOrphan{InstanceID: instanceID(gone), Deployment: gone}))
		Expect(s.Plan.Updates).To(ConsistOf(SatisfyAll(
			HaveField("InstanceID", instanceID(drifted)), HaveField("Drift", true),
			HaveField("Records", ConsistOf("index", "metadata", "manifest")))))
		Expect(s.Plan.Backups).To(ConsistOf(instanceID(drifted)))
		Expect(e.index()[instanceID(gone)].Orphaned).To(BeFalse())
		Expect(e.m.Status().LastRun.DryRun).To(BeFalse(), "a dry run is not the status's last run")
	})
})

// haveCounts checks the deployment counts of a summary.
func haveCounts(seen, matched, unmatched int) OmegaMatcher {
	return SatisfyAll(HaveField("DeploymentsSeen", seen), HaveField("Matched", matched), HaveField("Unmatched", unmatched))
}

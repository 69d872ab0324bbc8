package records

import (
	"time"

	"github.com/cloudfoundry-community/gogobosh"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

const id = "0b6e8d4c-3c62-4f5e-9a51-2d1f0c9e7a11"

var ginkgoStart = time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)

const memoryUnorphaned = memory.EffectUnorphaned

const manifest = "name: redis-small-" + id + "\nstemcells:\n- {alias: default, os: ubuntu-jammy, version: '1.5'}\n" +
	"properties:\n  blacksmith: {instance_id: " + id + ", plan_id: redis-large, organization_guid: org-1}\n"

// target is the target of the test instance: a deployment named for it,
// one VM, its manifest naming plan redis-large.
func target() *Target {
	GinkgoHelper()
	d := bosh.Deployment{Name: "redis-small-" + id, Releases: []gogobosh.Resource{{Name: "redis", Version: "1"}}}
	f := fleet.FetchedOf(manifest, []bosh.VM{{ID: "vm-1", Job: "redis", IPs: []string{"10.0.0.5"}}})
	w := New(d, f, report.Match{InstanceID: id, ServiceID: "redis", PlanID: "redis-small", Strategy: report.StrategyName, Confidence: 0.9})
	m, err := match.New(&catalog.Catalog{Services: []catalog.Service{{ID: "redis", Plans: []catalog.Plan{
		{ID: "redis-small", ServiceID: "redis"}, {ID: "redis-large", ServiceID: "redis"}}}}}, config.ReconcilerConfig{})
	Expect(err).NotTo(HaveOccurred())
	t, err := w.Load(m)
	Expect(err).NotTo(HaveOccurred())
	return t
}

// inStep is the index record of the target as the reconciler writes it.
func inStep(t *Target) *vault.Record {
	rec := &vault.Record{}
	setOwnedFields(rec, t)
	return rec
}

var _ = Describe("an instance's records", func() {
	It("take the plan the manifest names for the instance over the name's", func() {
		t := target()
		Expect([]string{t.ServiceID, t.PlanID}).To(Equal([]string{"redis", "redis-large"}))
	})

	DescribeTable("are in step when the index record shows what the reconciler last wrote",
		func(change func(*vault.Record), force, want bool) {
			t := target()
			rec := inStep(t)
			if change != nil {
				change(rec)
			}
			Expect(InStep(rec, t.Desired, force)).To(Equal(want))
		},
		Entry("as written", nil, false, true),
		Entry("a forced run trusts no fingerprint", nil, true, false),
		Entry("another fingerprint", func(r *vault.Record) { r.Fingerprint = "x" }, false, false),
		Entry("flagged orphaned", func(r *vault.Record) { r.Orphaned = true }, false, false),
		Entry("another deployment", func(r *vault.Record) { r.DeploymentName = "other" }, false, false),
		Entry("another Director", func(r *vault.Record) { r.Director = "west" }, false, false),
	)

	DescribeTable("need their documents read unless only the index record is off",
		func(rec *vault.Record, force, want bool) {
			t := target()
			if rec != nil && rec.Fingerprint == "same" {
				rec.Fingerprint = t.Fingerprint
			}
			Expect(NeedsRead(rec, t.Desired, force)).To(Equal(want))
		},
		Entry("no index record", nil, false, true),
		Entry("another fingerprint", &vault.Record{Fingerprint: "x"}, false, true),
		Entry("the same fingerprint, orphaned: only the flag changes", &vault.Record{Fingerprint: "same", Orphaned: true}, false, false),
		Entry("a forced run", &vault.Record{Fingerprint: "same"}, true, true),
	)

	DescribeTable("are vouched for by an index record the reconciler wrote, when the feed names nothing",
		func(rec *vault.Record, deployment, director string, want bool) {
			Expect(Vouches(rec, id, deployment, director)).To(Equal(want))
		},
		Entry("written, this deployment and Director", &vault.Record{Fingerprint: "f", DeploymentName: "d"}, "d", "", true),
		Entry("no record", nil, "d", "", false),
		Entry("not written by the reconciler", &vault.Record{DeploymentName: "d"}, "d", "", false),
		Entry("orphaned", &vault.Record{Fingerprint: "f", DeploymentName: "d", Orphaned: true}, "d", "", false),
		Entry("another deployment", &vault.Record{Fingerprint: "f", DeploymentName: "e"}, "d", "", false),
		Entry("another Director", &vault.Record{Fingerprint: "f", DeploymentName: "d", Director: "east"}, "d", "west", false),
	)
})

var _ = Describe("the diff of an instance's documents", func() {
	const now = "2026-11-25T00:00:00Z"
	type want struct {
		metadata, manifest, drift, backup bool
		actions                           []string
	}

	DescribeTable("writes what differs, backs up what exists, and says why",
		func(have func(*Target) Current, rec func(*Target) *vault.Record, w want) {
			t := target()
			var r *vault.Record
			if rec != nil {
				r = rec(t)
			}
			a := Diff(t, have(t), r, now)
			Expect([]bool{a.Metadata != nil, a.Manifest, a.Drift, a.Backup}).To(Equal([]bool{w.metadata, w.manifest, w.drift, w.backup}))
			var actions []string
			for _, e := range a.Entries {
				actions = append(actions, e.Action)
			}
			Expect(actions).To(Equal(w.actions))
		},
		Entry("nothing in Vault: created, nothing to back up",
			func(*Target) Current { return Current{} }, nil,
			want{metadata: true, manifest: true, actions: []string{"created"}}),
		Entry("in step: nothing",
			func(t *Target) Current {
				return Current{Metadata: t.nextMetadata(nil), Manifest: t.Manifest, HasManifest: true}
			},
			inStep, want{}),
		Entry("the manifest changed behind the broker's back: drift, backed up",
			func(t *Target) Current {
				return Current{Metadata: t.nextMetadata(nil), Manifest: "name: old\n", HasManifest: true}
			},
			inStep, want{metadata: true, manifest: true, drift: true, backup: true, actions: []string{"drift"}}),
		Entry("a VM moved: updated, backed up",
			func(t *Target) Current {
				md := t.nextMetadata(nil)
				md.VMs = nil
				return Current{Metadata: md, Manifest: t.Manifest, HasManifest: true}
			},
			inStep, want{metadata: true, backup: true, actions: []string{"updated"}}),
		Entry("documents without an index entry: restored (the index is not a document to back up)",
			func(t *Target) Current {
				return Current{Metadata: t.nextMetadata(nil), Manifest: t.Manifest, HasManifest: true}
			},
			nil, want{metadata: true, actions: []string{"restored"}}),
		Entry("an index record naming another plan: backed up before it changes",
			func(t *Target) Current {
				return Current{Metadata: t.nextMetadata(nil), Manifest: t.Manifest, HasManifest: true}
			},
			func(t *Target) *vault.Record { r := inStep(t); r.PlanID = "redis-small"; return r },
			want{backup: true}),
	)

	It("keeps every metadata field it does not own", func() {
		t := target()
		md := &vault.Metadata{Properties: map[string]any{"owner": "ops"}}
		a := Diff(t, Current{Metadata: md, Manifest: t.Manifest, HasManifest: true}, inStep(t), now)
		Expect(a.Metadata.Properties).To(HaveKeyWithValue("owner", "ops"))
		Expect(a.Metadata.VMs).To(HaveLen(1))
		Expect(md.VMs).To(BeEmpty(), "what was read is not changed")
	})
})

var _ = Describe("the index change of a matched instance", func() {
	It("creates the entry from the broker fields its manifest keeps, and un-orphans an orphan", func() {
		t := target()
		p := IndexChange(&Update{Target: t}, ginkgoStart)
		next, err := p.Change(nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(next).To(And(HaveField("OrganizationGUID", "org-1"), HaveField("PlanID", "redis-large"),
			HaveField("Fingerprint", t.Fingerprint)))
		next, err = p.Change(&vault.Record{Orphaned: true, Fingerprint: t.Fingerprint, PlanID: "redis-large", ServiceID: "redis",
			DeploymentName: t.Deployment, MatchStrategy: "name", MatchConfidence: 0.9})
		Expect(err).NotTo(HaveOccurred())
		Expect(next.Orphaned).To(BeFalse())
		Expect(*p.eff).To(Equal(memoryUnorphaned))
		next, err = p.Change(inStep(t))
		Expect(err).NotTo(HaveOccurred())
		Expect(next).To(BeNil(), "in step: no write")
	})

	It("keeps, once lean, only what its batch needs, and makes the same records", func() {
		for _, restored := range []*vault.Record{nil, {ServiceID: "redis", PlanID: "redis-small", SpaceGUID: "space-1"}} {
			full := IndexChange(&Update{Target: target(), Restored: restored, Wrote: true}, ginkgoStart)
			t := target()
			u := &Update{Target: t, Restored: restored, Wrote: true, Have: Current{Manifest: manifest, HasManifest: true}}
			lean := IndexChange(u, ginkgoStart).lean()
			Expect(u.Manifest).To(BeEmpty())
			Expect(u.Have).To(BeZero())
			Expect(u.vms).To(BeNil())
			Expect(u.releases).To(BeNil())
			Expect(u.fetched).To(BeNil())
			Expect(t.fetched).NotTo(BeNil(), "the run's own copy is not changed")
			Expect(lean.update.Wrote).To(BeTrue())
			for _, cur := range []*vault.Record{nil, {Orphaned: true}, inStep(target())} {
				want, err := full.Change(cur.Clone())
				Expect(err).NotTo(HaveOccurred())
				got, err := lean.Change(cur.Clone())
				Expect(err).NotTo(HaveOccurred())
				Expect(got).To(Equal(want))
				Expect(*lean.eff).To(Equal(*full.eff))
			}
		}
	})
})

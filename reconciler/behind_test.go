package reconciler_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// latestManifest is a redis deployment of plan and instance id asking for
// release and stemcell versions (a version, or "latest").
func latestManifest(plan, id, release, stemcell string) string {
	return fmt.Sprintf(`---
name: %[1]s-%[2]s
releases:
- name: redis
  version: %[3]s
stemcells:
- alias: default
  os: ubuntu-jammy
  version: %[4]s
instance_groups:
- name: redis
  instances: 1
  azs: [z1]
  jobs:
  - name: redis
    release: redis
  vm_type: small
  stemcell: default
  networks:
  - name: services
update:
  canaries: 1
  max_in_flight: 1
  canary_watch_time: 1000-30000
  update_watch_time: 1000-30000
properties:
  blacksmith:
    service_id: redis
    plan_id: %[1]s
    instance_id: %[2]s
`, plan, id, release, stemcell)
}

var _ = Describe("instances behind their Director (a latest release or stemcell uploaded in a newer version)", func() {
	const (
		both   = "0b7a1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d" // redis-small: latest release and stemcell
		pinned = "1c8b2d3e-4f5a-4b6c-9d7e-8f9a0b1c2d3e" // redis-small: both pinned
		rel    = "2d9c3e4f-5a6b-4c7d-ae8f-9a0b1c2d3e4f" // redis-large: latest release, pinned stemcell
	)
	var e *env
	deploy := func(manifest string) {
		GinkgoHelper()
		ctx := context.Background()
		t, err := e.bosh.Deploy(ctx, []byte(manifest))
		Expect(err).NotTo(HaveOccurred())
		t, err = e.bosh.WaitTask(ctx, t.ID, 10*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.State).To(Equal(bosh.TaskDone), t.Result)
	}
	lag := func(typ, name, running, newest string) report.Lag {
		return report.Lag{Type: typ, Name: name, Running: running, Newest: newest}
	}
	BeforeEach(func() {
		e = newEnv(envOptions{sim: sim.Options{TaskDuration: 10 * time.Millisecond,
			Releases: []string{"redis/16.1.0"}, Stemcells: []string{"ubuntu-jammy/1.506"}}})
		deploy(latestManifest("redis-small", both, "latest", "latest"))
		deploy(latestManifest("redis-small", pinned, "16.1.0", "1.506"))
		deploy(latestManifest("redis-large", rel, "latest", "1.506"))
	})

	It("shows the instances asking for latest behind once a newer version is uploaded, not those pinned, and deploys nothing", func() {
		Expect(e.run(report.RunOptions{}).Outdated).To(BeNil(), "the instances are recorded: judged by the next run")
		s := e.run(report.RunOptions{})
		Expect(s.Matched).To(Equal(3))
		Expect(s.Outdated).NotTo(BeNil(), "two instances ask for a latest")
		Expect(s.Outdated.Behind).To(PointTo(MatchFields(IgnoreExtras, Fields{
			"Count": Equal(0), "Asking": Equal(2), "Unknown": Equal(0),
			"ByPlan": Equal(map[string]int{"redis-small": 0, "redis-large": 0}), "Instances": BeEmpty(),
		})), "all current: the Director has nothing newer")

		e.sim.UploadRelease("redis", "16.2.0")
		e.sim.ResetStats()
		s = e.run(report.RunOptions{})
		Expect(s.Result).To(Equal("success"))
		b := s.Outdated.Behind
		Expect(b.Count).To(Equal(2))
		Expect(b.ByPlan).To(Equal(map[string]int{"redis-small": 1, "redis-large": 1}))
		Expect(b.Instances).To(ConsistOf(
			And(HaveField("InstanceID", both), HaveField("PlanID", "redis-small"), HaveField("Deployment", "redis-small-"+both),
				HaveField("Lags", Equal([]report.Lag{lag("release", "redis", "16.1.0", "16.2.0")}))),
			And(HaveField("InstanceID", rel), HaveField("Lags", Equal([]report.Lag{lag("release", "redis", "16.1.0", "16.2.0")}))),
		))
		Expect(e.sim.Stats().Requests).To(And(
			HaveKeyWithValue("GET /releases", 1), HaveKeyWithValue("GET /stemcells", 1),
			HaveKeyWithValue("GET /deployments", 1), Not(HaveKey("GET /deployments/:name")),
		), "two requests more a run, no manifest fetched for it")
		Expect(e.sim.Stats().Tasks).To(BeZero(), "nothing deployed")

		Expect(e.m.Status().Outdated.Behind.Count).To(Equal(2))
		Expect(counter(e.reg, "blacksmith_instances_behind", map[string]string{"plan": "redis-small"})).To(Equal(1.0))
		Expect(counter(e.reg, "blacksmith_instances_behind", map[string]string{"plan": "redis-large"})).To(Equal(1.0))
		view, err := e.m.Views().Instance(context.Background(), both)
		Expect(err).NotTo(HaveOccurred())
		Expect(view.Version).To(Equal(&reconciler.InstanceVersion{Behind: []report.Lag{lag("release", "redis", "16.1.0", "16.2.0")}}))
		view, err = e.m.Views().Instance(context.Background(), pinned)
		Expect(err).NotTo(HaveOccurred())
		Expect(view.Version).To(BeNil(), "pinned: behind on nothing")

		e.sim.UploadStemcell("ubuntu-jammy", "1.600")
		s = e.run(report.RunOptions{})
		Expect(s.Outdated.Behind.Instances).To(ContainElement(And(HaveField("InstanceID", both), HaveField("Lags", Equal([]report.Lag{
			lag("release", "redis", "16.1.0", "16.2.0"), lag("stemcell", "ubuntu-jammy", "1.506", "1.600")})))))
		Expect(s.Outdated.Behind.Instances).To(ContainElement(And(HaveField("InstanceID", rel), HaveField("Lags", HaveLen(1)))))

		deploy(latestManifest("redis-small", both, "latest", "latest")) // brought to the newest: current again
		s = e.run(report.RunOptions{})
		Expect(s.Outdated.Behind.Instances).To(ConsistOf(HaveField("InstanceID", rel)))
		Expect(counter(e.reg, "blacksmith_instances_behind", map[string]string{"plan": "redis-small"})).To(BeZero())
		view, _ = e.m.Views().Instance(context.Background(), both)
		Expect(view.Version).To(BeNil())
	})

	It("reports a Director that cannot say what it has uploaded as its error, not the run's", func() {
		e.run(report.RunOptions{})
		Expect(e.run(report.RunOptions{}).Outdated.Behind.Asking).To(Equal(2))
		e.sim.UploadRelease("redis", "16.2.0")
		Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /releases", Status: 500, Count: 1})).To(Succeed())
		s := e.run(report.RunOptions{})
		Expect(s.Result).To(Equal("success"))
		Expect(s.ErrorCount).To(BeZero())
		b := s.Outdated.Behind
		Expect(b.Errors).To(ConsistOf(And(ContainSubstring("listing releases"), ContainSubstring("status 500"))))
		Expect(b.Count).To(BeZero(), "not judged on releases, and the stemcells are current")

		s = e.run(report.RunOptions{})
		Expect(s.Outdated.Behind.Errors).To(BeEmpty())
		Expect(s.Outdated.Behind.Count).To(Equal(2))
	})

	It("does not look in a dry or scoped run", func() {
		e.run(report.RunOptions{})
		Expect(e.run(report.RunOptions{}).Outdated).NotTo(BeNil())
		e.sim.UploadRelease("redis", "16.2.0")
		e.sim.ResetStats()
		Expect(e.run(report.RunOptions{DryRun: true}).Outdated).To(BeNil())
		Expect(e.run(report.RunOptions{Scope: report.Scope{Plan: "redis-large"}}).Outdated).To(BeNil())
		Expect(e.sim.Stats().Requests).NotTo(HaveKey("GET /releases"))
	})
})

var _ = Describe("instances behind their Director, when no manifest asks for latest", func() {
	It("asks the Director nothing more and reports nothing", func() {
		e := newEnv(envOptions{seed: 5})
		e.run(report.RunOptions{})
		e.sim.UploadRelease("redis", "99.0.0")
		e.sim.ResetStats()
		s := e.run(report.RunOptions{})
		Expect(s.Outdated).To(BeNil())
		Expect(e.sim.Stats().Requests).NotTo(HaveKey("GET /releases"))
		Expect(e.sim.Stats().Requests).NotTo(HaveKey("GET /stemcells"))
	})
})

package reconciler_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("a run over a scope", func() {
	var e *env
	BeforeEach(func() {
		e = newEnv(envOptions{seed: 9})
		Expect(e.run(report.RunOptions{}).Created).To(Equal(9))
	})

	planOf := func(name string) string { return name[:len(name)-37] }
	manifestGets := func() int { return e.sim.Stats().Requests["GET /deployments/:name"] }

	It("fetches only the instance's deployment and writes only its records", func() {
		target := e.names[4]
		id := instanceID(target)
		Expect(e.store.PutManifest(ctx(), id, "name: lost\n")).To(Succeed()) // out of step
		for _, other := range []string{e.names[0], e.names[8]} {
			Expect(e.store.PutManifest(ctx(), instanceID(other), "name: lost\n")).To(Succeed())
		}
		e.sim.ResetStats()
		s := e.run(report.RunOptions{Force: true, Scope: report.Scope{Instance: id}})
		Expect(manifestGets()).To(Equal(1), "only the instance's deployment")
		Expect(s.Scope).To(Equal(&report.Scope{Instance: id}))
		Expect(s.OutOfScope).To(Equal(8))
		Expect(s.InstancesSynced).To(Equal(1))
		stored, _, _ := e.store.Manifest(ctx(), id)
		Expect(stored).To(Equal(e.manifest(target)))
		for _, other := range []string{e.names[0], e.names[8]} {
			stored, _, _ := e.store.Manifest(ctx(), instanceID(other))
			Expect(stored).To(Equal("name: lost\n"), "out of scope: not written")
		}
	})

	It("takes a plan's deployments only, looks for orphans only among its records, and a dry run shows only them", func() {
		plan := planOf(e.names[0])
		var inPlan, others []string
		for _, n := range e.names {
			if planOf(n) == plan {
				inPlan = append(inPlan, n)
			} else {
				others = append(others, n)
			}
		}
		Expect(inPlan).NotTo(BeEmpty())
		Expect(others).NotTo(BeEmpty())
		e.sim.RemoveDeployment(others[0]) // an orphan of another plan
		e.sim.ResetStats()

		dry := e.run(report.RunOptions{DryRun: true, Force: true, Scope: report.Scope{Plan: plan}})
		Expect(manifestGets()).To(Equal(len(inPlan)))
		Expect(dry.Plan.Orphans).To(BeEmpty(), "the other plan's orphan is out of scope")

		s := e.run(report.RunOptions{Scope: report.Scope{Plan: plan}})
		Expect(s.Orphaned).To(BeZero())
		Expect(e.index()[instanceID(others[0])].Orphaned).To(BeFalse())
		Expect(e.m.Status().Orphans).To(BeEmpty(), "a scoped run leaves the status of the rest alone")

		full := e.run(report.RunOptions{})
		Expect(full.Orphaned).To(Equal(1), "the whole estate's run finds it")
	})

	It("takes one deployment by name, and a service's deployments", func() {
		e.sim.ResetStats()
		e.run(report.RunOptions{Force: true, Scope: report.Scope{Deployment: e.names[2]}})
		Expect(manifestGets()).To(Equal(1))

		service := strings.SplitN(e.names[0], "-", 2)[0]
		count := 0
		for _, n := range e.names {
			if strings.HasPrefix(n, service+"-") {
				count++
			}
		}
		e.sim.ResetStats()
		s := e.run(report.RunOptions{Force: true, Scope: report.Scope{Service: service}})
		Expect(manifestGets()).To(Equal(count))
		Expect(s.Matched).To(Equal(count))
	})
})

package reconciler_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// versioned is the test catalog with redis-small deploying version want.
func versioned(want string) *catalog.Catalog {
	return &catalog.Catalog{Services: []catalog.Service{
		{ID: "redis", Name: "redis", Plans: []catalog.Plan{
			{ID: "redis-small", Name: "small", ServiceID: "redis", MaintenanceInfo: &catalog.MaintenanceInfo{Version: want}},
			{ID: "redis-large", Name: "large", ServiceID: "redis"},
		}},
		{ID: "postgresql", Name: "postgresql", Plans: []catalog.Plan{
			{ID: "postgresql-small", Name: "small", ServiceID: "postgresql"},
		}},
	}}
}

var _ = Describe("outdated instances (what should run, not only what runs)", func() {
	var (
		e *env
		h *heard
	)
	BeforeEach(func() {
		h = &heard{}
		e = newEnv(envOptions{seed: 9})
	})
	manager := func(want string) {
		e.m = e.newManagerWith(func(o *reconciler.Options) { o.Notifier, o.Catalog, o.Registerer = h, versioned(want), e.reg })
	}
	smalls := func() []string {
		var out []string
		for _, name := range e.names {
			if rec := e.index()[instanceID(name)]; rec != nil && rec.PlanID == "redis-small" {
				out = append(out, instanceID(name))
			}
		}
		return out
	}

	It("finds the instances behind their plan's version every run, announces each once per version, deploys nothing", func() {
		manager("2.0.0")
		e.run(report.RunOptions{}) // records every instance (none holds a version: found by the reconciler)
		small := smalls()
		Expect(small).NotTo(BeEmpty())
		current := small[0]
		_, err := e.store.Update(context.Background(), map[string]vault.Change{current: func(r *vault.Record) (*vault.Record, error) {
			next := r.Clone()
			next.MaintenanceVersion = "2.0.0"
			return next, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		older := ""
		if len(small) > 1 {
			older = small[1]
			_, err = e.store.Update(context.Background(), map[string]vault.Change{older: func(r *vault.Record) (*vault.Record, error) {
				next := r.Clone()
				next.MaintenanceVersion = "1.9.0"
				return next, nil
			}})
			Expect(err).NotTo(HaveOccurred())
		}
		e.sim.ResetStats()
		s := e.run(report.RunOptions{})
		Expect(s.Outdated).NotTo(BeNil())
		Expect(s.Outdated.Count).To(Equal(len(small) - 1))
		Expect(s.Outdated.ByPlan).To(Equal(map[string]int{"redis-small": len(small) - 1}))
		Expect(s.Outdated.Instances).NotTo(ContainElement(HaveField("InstanceID", current)))
		Expect(s.Outdated.Instances[0].Version).To(Equal(""), "the unknown versions first")
		if older != "" {
			Expect(s.Outdated.Instances).To(ContainElement(And(HaveField("InstanceID", older), HaveField("Version", "1.9.0"), HaveField("Want", "2.0.0"))))
		}
		Expect(e.sim.Stats().Tasks).To(BeZero(), "nothing deployed")
		Expect(e.m.Status().Outdated.Count).To(Equal(len(small) - 1))
		Expect(counter(e.reg, "blacksmith_instances_outdated", map[string]string{"plan": "redis-small"})).To(Equal(float64(len(small) - 1)))
		Expect(h.of(notify.Outdated)).To(HaveLen(len(small) - 1))

		view, err := e.m.Views().Instance(context.Background(), current)
		Expect(err).NotTo(HaveOccurred())
		Expect(view.Version).To(Equal(&reconciler.InstanceVersion{Recorded: "2.0.0", Plan: "2.0.0", Outdated: false}))
		view, _ = e.m.Views().Instance(context.Background(), s.Outdated.Instances[0].InstanceID)
		Expect(view.Version).To(HaveField("Outdated", true))

		e.run(report.RunOptions{})
		Expect(h.of(notify.Outdated)).To(HaveLen(len(small)-1), "announced once")

		manager("2.1.0") // the plan moves on: every one of them is behind, each announced for 2.1.0
		s = e.run(report.RunOptions{})
		Expect(s.Outdated.Count).To(Equal(len(small)))
		Expect(h.of(notify.Outdated)).To(HaveLen(2*len(small) - 1))
	})

	It("costs nothing when no plan declares a version", func() {
		e.run(report.RunOptions{})
		s := e.run(report.RunOptions{})
		Expect(s.Outdated).To(BeNil())
		Expect(e.m.Status().Outdated).To(BeNil())
	})
})

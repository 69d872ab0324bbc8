package reconciler_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("a drift named", func() {
	// A manifest changed behind the broker's back: its stemcell moved on
	// and a credential written into it in place of its variable.
	const literal = "hunter2-written-by-hand"
	drift := func(e *env, name string) {
		GinkgoHelper()
		text := e.manifest(name)
		changed := strings.Replace(text, `version: "1.506"`, `version: "1.507"`, 1)
		changed = strings.Replace(changed, "password: ((", "password: "+literal+" #((", 1)
		Expect(changed).NotTo(Equal(text))
		Expect(e.sim.PutDeployment(changed)).To(Succeed())
	}
	// noLiteral says no value of changed is the credential.
	noLiteral := func(changed map[string]string) {
		GinkgoHelper()
		for k, v := range changed {
			Expect(v).NotTo(ContainSubstring(literal), k)
		}
	}

	It("names each drifted instance with what changed, in the summary, the dry run's and the history, never a value", func() {
		e := newEnv(envOptions{seed: 3})
		e.run(report.RunOptions{})
		name := e.names[1]
		drift(e, name)

		dry := e.run(report.RunOptions{DryRun: true, Force: true})
		Expect(dry.Drifted).To(ConsistOf(And(HaveField("InstanceID", instanceID(name)), HaveField("Deployment", name))))

		s := e.run(report.RunOptions{Force: true})
		Expect(s.Drift).To(Equal(1))
		Expect(s.Drifted).To(HaveLen(1))
		d := s.Drifted[0]
		Expect(d.InstanceID).To(Equal(instanceID(name)))
		Expect(d.Deployment).To(Equal(name))
		Expect(d.Changed).To(And(HaveKeyWithValue("diff_properties", "password"), HaveKeyWithValue("diff_groups", "redis")))
		Expect(d.Changed).To(HaveKey("changes"))
		Expect(d.Changed["changes"]).NotTo(Equal("0"))
		noLiteral(d.Changed)

		events, err := e.store.Events(ctx(), instanceID(name), 0)
		Expect(err).NotTo(HaveOccurred())
		var found bool
		for _, ev := range events {
			if ev.Kind == "drift" {
				found = true
				Expect(ev.Details).To(And(HaveKeyWithValue("diff_properties", "password"), HaveKey("changes")))
				noLiteral(ev.Details)
				Expect(ev.Message).NotTo(ContainSubstring(literal))
			}
		}
		Expect(found).To(BeTrue(), "a drift event")
		Expect(e.run(report.RunOptions{Force: true}).Drifted).To(BeEmpty(), "recorded once")
	})
})

package broker_test

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("an instance the reconciler adopted from a Director", func() {
	var e *env
	BeforeEach(func() { e = newEnv() })

	// adopt writes the record the reconciler makes of a deployment it found
	// on the Director (no broker record of it), not yet confirmed.
	adopt := func(id, planID string) {
		GinkgoHelper()
		deployed(vault.DeploymentName(planID, id), e)
		_, err := e.store.Update(context.Background(), map[string]vault.Change{id: func(*vault.Record) (*vault.Record, error) {
			return &vault.Record{ServiceID: "redis", PlanID: planID, DeploymentName: vault.DeploymentName(planID, id),
				Adopted: true, AdoptedAt: "2026-11-25T00:00:00Z", MatchStrategy: "metadata", MatchConfidence: 1}, nil
		}})
		Expect(err).NotTo(HaveOccurred())
	}

	It("is neither bound, updated nor deleted until an operator confirms it", func() {
		adopt("found-1", "redis-large")
		bind := e.request("PUT", instancePath("found-1")+"/service_bindings/b-1",
			map[string]any{"service_id": "redis", "plan_id": "redis-large"})
		Expect(bind.Status).To(Equal(http.StatusUnprocessableEntity), bind.Raw)
		Expect(bind.Body["description"]).To(ContainSubstring("awaits an operator's confirmation"))
		upd := e.request("PATCH", instancePath("found-1")+"?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "plan_id": "redis-large", "parameters": map[string]any{"x": 1}})
		Expect(upd.Status).To(Equal(http.StatusUnprocessableEntity), upd.Raw)
		del := e.request("DELETE", instancePath("found-1")+"?service_id=redis&plan_id=redis-large&accepts_incomplete=true", nil)
		Expect(del.Status).To(Equal(http.StatusUnprocessableEntity), del.Raw)
		Expect(e.record("found-1")).To(HaveField("LastOperation", BeNil()), "nothing started")
		Expect(e.director.Stats().Deployments).To(Equal(1), "the deployment is still there")

		_, err := e.store.Update(context.Background(), map[string]vault.Change{"found-1": func(cur *vault.Record) (*vault.Record, error) {
			cur.Adopted, cur.AdoptionConfirmedAt = false, "2026-11-25T01:00:00Z"
			return cur, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		// Its secrets, as Vault kept them from before (a restore after a loss of the index).
		Expect(e.store.PutSecret(context.Background(), "found-1/credentials", map[string]any{"password": "kept"})).To(Succeed())
		bind = e.request("PUT", instancePath("found-1")+"/service_bindings/b-1",
			map[string]any{"service_id": "redis", "plan_id": "redis-large"})
		Expect(bind.Status).To(Equal(http.StatusCreated), bind.Raw)
	})

	It("uses up no quota: a plan's limit counts the broker's own instances only", func() {
		adopt("found-1", "redis-small")
		adopt("found-2", "redis-small")
		e.provision("mine-1", "redis-small", nil)
		e.provision("mine-2", "redis-small", nil)
		a := e.request("PUT", instancePath("mine-3")+"?accepts_incomplete=true", provisionBody("redis-small", nil))
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), "plan small allows 2, adoptions aside")
	})
})

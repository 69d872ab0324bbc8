package broker_test

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Update", func() {
	var e *env
	ctx := context.Background()
	update := func(id string, body map[string]any) answer {
		return e.request("PATCH", instancePath(id)+"?accepts_incomplete=true", body)
	}

	BeforeEach(func() { e = newEnv() })

	It("changes to an updatable plan: same deployment, new manifest, new plan recorded", func() {
		e.provisioned("u-1", "redis-small")
		a := update("u-1", map[string]any{"service_id": "redis", "plan_id": "redis-large"})
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Expect(e.record("u-1").LastOperation.Type).To(Equal("update"))
		e.eventuallyState("u-1", "succeeded")
		r := e.record("u-1")
		Expect(r.PlanID).To(Equal("redis-large"))
		Expect(r.DeploymentName).To(Equal("redis-small-u-1"))
		text, _, err := e.store.Manifest(ctx, "u-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(ContainSubstring("plan_id: redis-large"))
	})

	It("refuses a change to a plan that is not updatable with 422 PlanChangeNotSupported", func() {
		e.provisioned("u-2", "redis-large")
		a := update("u-2", map[string]any{"service_id": "redis", "plan_id": "redis-small"})
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity))
		Expect(a.Body).To(HaveKeyWithValue("error", "PlanChangeNotSupported"))
		Expect(e.record("u-2").PlanID).To(Equal("redis-large"))
	})

	It("merges new parameters over the recorded ones and deploys them; an update that changes nothing is 200", func() {
		e.provision("u-3", "redis-large", map[string]any{"a": 1})
		e.eventuallyState("u-3", "succeeded")
		a := update("u-3", map[string]any{"service_id": "redis", "parameters": map[string]any{"instances": 2}})
		Expect(a.Status).To(Equal(http.StatusAccepted))
		e.eventuallyState("u-3", "succeeded")
		Expect(e.record("u-3").Parameters).To(HaveLen(2))
		vms, err := e.client.VMs(ctx, "redis-large-u-3")
		Expect(err).NotTo(HaveOccurred())
		Expect(vms).To(HaveLen(2))

		Expect(update("u-3", map[string]any{"service_id": "redis", "parameters": map[string]any{"a": 1}}).Status).To(Equal(http.StatusOK))
	})

	It("generates no secret over a running instance that has none stored: a template that needs one is refused", func() {
		deployed("redis-large-u-5", e)
		putRecord(e, "u-5", &vault.Record{ServiceID: "redis", PlanID: "redis-large", DeploymentName: "redis-large-u-5"})
		before, err := e.client.Manifest(ctx, "redis-large-u-5")
		Expect(err).NotTo(HaveOccurred())
		a := update("u-5", map[string]any{"service_id": "redis", "parameters": map[string]any{"instances": 2}})
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("credentials are not held by the broker"))
		_, ok, err := e.store.Secret(ctx, "u-5/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "no secret generated")
		after, err := e.client.Manifest(ctx, "redis-large-u-5")
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(Equal(before), "nothing deployed")
	})

	It("refuses an update while another operation is in progress", func() {
		e.director.Knobs().SetTaskDuration(5 * time.Second)
		e.provision("u-4", "redis-large", nil)
		a := update("u-4", map[string]any{"service_id": "redis", "parameters": map[string]any{"x": 1}})
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity))
		Expect(a.Body).To(HaveKeyWithValue("error", "ConcurrencyError"))
	})
})

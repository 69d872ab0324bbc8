package broker_test

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Bind", func() {
	var e *env
	ctx := context.Background()
	bindingPath := func(id, bid string) string { return instancePath(id) + "/service_bindings/" + bid }
	bindBody := func(app string) map[string]any {
		return map[string]any{"service_id": "redis", "plan_id": "redis-small", "app_guid": app}
	}

	BeforeEach(func() { e = newEnv() })

	It("renders the credentials with the VMs' addresses and the instance's secrets, and stores them per binding", func() {
		e.provision("b-1", "redis-small", map[string]any{"instances": 2})
		e.eventuallyState("b-1", "succeeded")
		vms, err := e.client.VMs(ctx, "redis-small-b-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(vms).To(HaveLen(2))
		secrets, _, err := e.store.Secret(ctx, "b-1/credentials")
		Expect(err).NotTo(HaveOccurred())

		a := e.request("PUT", bindingPath("b-1", "x-1"), bindBody("app-1"))
		Expect(a.Status).To(Equal(http.StatusCreated), a.Raw)
		creds := a.Body["credentials"].(map[string]any)
		Expect(creds["host"]).To(Equal(vms[0].IPs[0]))
		Expect(creds["hosts"]).To(ConsistOf(vms[0].IPs[0], vms[1].IPs[0]))
		Expect(creds["password"]).To(Equal(secrets["password"]))
		Expect(creds["binding"]).To(Equal("x-1"))
		Expect(creds["port"]).To(BeNumerically("==", 6379))

		stored, ok, err := e.store.Secret(ctx, "b-1/bindings/x-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(stored["credentials"]).To(HaveKeyWithValue("password", secrets["password"]))
		Expect(stored["app_guid"]).To(Equal("app-1"))

		again := e.request("PUT", bindingPath("b-1", "x-1"), bindBody("app-1"))
		Expect(again.Status).To(Equal(http.StatusOK))
		Expect(again.Body["credentials"]).To(HaveKeyWithValue("password", secrets["password"]))
		Expect(e.request("PUT", bindingPath("b-1", "x-1"), bindBody("app-2")).Status).To(Equal(http.StatusConflict))

		got := e.request("GET", bindingPath("b-1", "x-1"), nil)
		Expect(got.Status).To(Equal(http.StatusOK))
		Expect(got.Body["credentials"]).To(HaveKeyWithValue("host", vms[0].IPs[0]))

		Expect(e.request("DELETE", bindingPath("b-1", "x-1")+"?service_id=redis&plan_id=redis-small", nil).Status).To(Equal(http.StatusOK))
		Expect(e.request("DELETE", bindingPath("b-1", "x-1")+"?service_id=redis&plan_id=redis-small", nil).Status).To(Equal(http.StatusGone))
		Expect(e.request("GET", bindingPath("b-1", "x-1"), nil).Status).To(Equal(http.StatusNotFound))
		_, ok, err = e.store.Secret(ctx, "b-1/bindings/x-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())
	})

	It("refuses to rotate a shared plan's binding (binding_rotatable is false) with 400", func() {
		e.provision("b-r", "redis-small", nil)
		e.eventuallyState("b-r", "succeeded")
		Expect(e.request("PUT", bindingPath("b-r", "r-1"), bindBody("app")).Status).To(Equal(http.StatusCreated))
		a := e.request("PUT", bindingPath("b-r", "r-2"), map[string]any{"predecessor_binding_id": "r-1"})
		Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("does not rotate bindings"))
		cat := e.request("GET", "/v2/catalog", nil)
		Expect(cat.Raw).NotTo(ContainSubstring("binding_rotatable"))
	})

	It("refuses with 422 naming max_bindings a binding beyond the plan's, and takes one again after an unbind", func() {
		e = newEnv(func(o *broker.Options) { o.Catalog.Services[0].Plans[0].MaxBindings = 2 })
		e.provision("b-9", "redis-small", nil)
		e.eventuallyState("b-9", "succeeded")
		for _, bid := range []string{"m-1", "m-2"} {
			Expect(e.request("PUT", bindingPath("b-9", bid), bindBody("app")).Status).To(Equal(http.StatusCreated))
		}
		third := e.request("PUT", bindingPath("b-9", "m-3"), bindBody("app"))
		Expect(third.Status).To(Equal(http.StatusUnprocessableEntity), third.Raw)
		Expect(third.Body["description"]).To(ContainSubstring("at most 2 bindings"))
		Expect(third.Body["description"]).To(ContainSubstring("max_bindings"))
		_, ok, err := e.store.Secret(ctx, "b-9/bindings/m-3")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "nothing stored")
		Expect(e.request("PUT", bindingPath("b-9", "m-2"), bindBody("app")).Status).To(Equal(http.StatusOK), "a repeat is no new binding")

		Expect(e.request("DELETE", bindingPath("b-9", "m-1")+"?service_id=redis&plan_id=redis-small", nil).Status).To(Equal(http.StatusOK))
		Expect(e.request("PUT", bindingPath("b-9", "m-3"), bindBody("app")).Status).To(Equal(http.StatusCreated))
	})

	It("refuses, writing nothing, to render credentials that need secrets the instance does not have", func() {
		deployed("redis-small-b-4", e)
		putRecord(e, "b-4", &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: "redis-small-b-4"})
		a := e.request("PUT", bindingPath("b-4", "x"), bindBody("a"))
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("credentials are not held by the broker"))
		_, ok, err := e.store.Secret(ctx, "b-4/bindings/x")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "no binding is stored")
	})

	It("refuses with 422 to bind an instance whose deployment is gone", func() {
		putRecord(e, "b-5", &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: "redis-small-b-5"})
		a := e.request("PUT", bindingPath("b-5", "x"), bindBody("a"))
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("deployment does not exist"))
	})

	It("refuses to bind a service that is not bindable with 400", func() {
		e.provisioned("b-2", "memo-one")
		a := e.request("PUT", bindingPath("b-2", "x"), map[string]any{"service_id": "memo", "plan_id": "memo-one", "app_guid": "a"})
		Expect(a.Status).To(Equal(http.StatusBadRequest))
	})

	It("refuses to bind while the provision is in progress with 422, and an unknown instance with 404", func() {
		e.director.Knobs().SetTaskDuration(5 * time.Second)
		e.provision("b-3", "redis-small", nil)
		Expect(e.request("PUT", bindingPath("b-3", "x"), bindBody("a")).Status).To(Equal(http.StatusUnprocessableEntity))
		Expect(e.request("PUT", bindingPath("nobody", "x"), bindBody("a")).Status).To(Equal(http.StatusNotFound))
	})
})

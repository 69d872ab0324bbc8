package e2e_test

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	osb "sigs.k8s.io/go-open-service-broker-client/v2"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("An instance's whole life", Ordered, func() {
	const id = "e2e-life-1"
	var (
		d      *daemon
		client osb.Client
		before *vault.Record
	)
	ctx := context.Background()

	BeforeAll(func() {
		d = startDaemon("")
		client = newOSBClient(d, brokerUser, brokerPass)
	})

	It("serves the sample catalog", func() {
		cat, err := client.GetCatalog()
		Expect(err).NotTo(HaveOccurred())
		names := map[string][]string{}
		for _, s := range cat.Services {
			for _, p := range s.Plans {
				names[s.Name] = append(names[s.Name], p.ID)
			}
		}
		Expect(names).To(HaveKeyWithValue("redis", ConsistOf("redis-small", "redis-large")))
		Expect(names).To(HaveKey("postgresql"))
	})

	It("provisions asynchronously and last_operation reports success", func() {
		res, err := client.ProvisionInstance(&osb.ProvisionRequest{
			InstanceID: id, AcceptsIncomplete: true, ServiceID: "redis", PlanID: "redis-small",
			OrganizationGUID: "org-e2e", SpaceGUID: "space-e2e",
			Parameters: map[string]any{"maxmemory": "512mb"},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Async).To(BeTrue())
		eventuallySucceeded(client, id)
		code, body := director("/deployments/redis-small-" + id)
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(body).To(ContainSubstring(`maxmemory: 512mb`), "the parameter reached the manifest")
	})

	It("binds with credentials rendered from the VMs and the instance's secrets", func() {
		res, err := client.Bind(&osb.BindRequest{BindingID: "e2e-bind-1", InstanceID: id, ServiceID: "redis",
			PlanID: "redis-small", AppGUID: strPtr("app-e2e")})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Credentials).To(HaveKeyWithValue("port", BeNumerically("==", 6379)))
		Expect(res.Credentials["host"]).To(MatchRegexp(`^\d+\.\d+\.\d+\.\d+$`))
		secrets, ok, err := store.Secret(ctx, id+"/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(res.Credentials["password"]).To(Equal(secrets["password"]))
		stored, ok, err := store.Secret(ctx, id+"/bindings/e2e-bind-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(stored["credentials"]).To(HaveKeyWithValue("host", res.Credentials["host"]))
	})

	It("loses the instance when the index is wiped in Vault", func() {
		var err error
		before, err = store.Record(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(before).NotTo(BeNil())
		wipeIndex()
		after, err := store.Record(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(BeNil())
		code, body := d.get("/v2/service_instances/"+id+"/last_operation", brokerUser, brokerPass)
		Expect(code).To(Equal(http.StatusNotFound), "last_operation answers 404 without a record: %s", body)
	})

	It("gets the instance back, same ids and fields, from POST /b/reconcile?wait=60s", func() {
		code, body := d.do(http.MethodPost, "/b/reconcile?wait=60s", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
		ans := decode(body)
		Expect(ans["run_id"]).NotTo(BeEmpty())
		Expect(ans["summary"]).To(HaveKeyWithValue("run_id", ans["run_id"]))

		back, err := store.Record(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(back).NotTo(BeNil())
		Expect(back.ServiceID).To(Equal(before.ServiceID))
		Expect(back.PlanID).To(Equal(before.PlanID))
		Expect(back.DeploymentName).To(Equal(before.DeploymentName))
		Expect(back.OrganizationGUID).To(Equal(before.OrganizationGUID))
		Expect(back.SpaceGUID).To(Equal(before.SpaceGUID))
		Expect(back.Parameters).To(Equal(before.Parameters))

		inst, err := client.GetInstance(&osb.GetInstanceRequest{InstanceID: id})
		Expect(err).NotTo(HaveOccurred())
		Expect(inst.ServiceID).To(Equal("redis"))
		Expect(inst.PlanID).To(Equal("redis-small"))
		state, _, _ := lastOperation(client, id)
		Expect(state).To(Equal(osb.StateSucceeded))
	})

	It("deprovisions: the deployment is deleted and the instance is gone", func() {
		res, err := client.DeprovisionInstance(&osb.DeprovisionRequest{InstanceID: id, AcceptsIncomplete: true,
			ServiceID: "redis", PlanID: "redis-small"})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Async).To(BeTrue())
		eventuallyDeleted(client, id)

		rec, err := store.Record(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec).To(BeNil())
		code, body := director("/deployments/redis-small-" + id)
		Expect(code).To(Equal(http.StatusNotFound), body)
		code, body = d.do(http.MethodDelete, "/v2/service_instances/"+id+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small",
			brokerUser, brokerPass)
		Expect(code).To(Equal(http.StatusGone), "a second deprovision: %s", body)
	})
})

package e2e_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	osb "sigs.k8s.io/go-open-service-broker-client/v2"
)

var _ = Describe("per_binding bindings through the real OSB client", func() {
	It("binds twice asynchronously with users of their own, and an unbind revokes one user alone", func() {
		d := startDaemon("")
		c := newOSBClient(d, brokerUser, brokerPass)
		ctx := context.Background()
		const id = "e2e-perbinding-1"
		_, err := c.ProvisionInstance(&osb.ProvisionRequest{InstanceID: id, AcceptsIncomplete: true, ServiceID: "redis",
			PlanID: "redis-large", OrganizationGUID: "org", SpaceGUID: "space"})
		Expect(err).NotTo(HaveOccurred())
		eventuallySucceeded(c, id)
		DeferCleanup(func() { // the suite shares one Vault mount and one Director
			_, err := c.DeprovisionInstance(&osb.DeprovisionRequest{InstanceID: id, AcceptsIncomplete: true,
				ServiceID: "redis", PlanID: "redis-large"})
			Expect(err).NotTo(HaveOccurred())
			eventuallyDeleted(c, id)
		})
		deployment := "redis-large-" + id

		_, err = c.Bind(&osb.BindRequest{BindingID: "sync", InstanceID: id, ServiceID: "redis", PlanID: "redis-large",
			AppGUID: strPtr("app")})
		Expect(osb.IsAsyncRequiredError(err)).To(BeTrue(), "a per_binding plan binds asynchronously only: %v", err)

		bind := func(bid string) map[string]any {
			GinkgoHelper()
			res, err := c.Bind(&osb.BindRequest{BindingID: bid, InstanceID: id, ServiceID: "redis", PlanID: "redis-large",
				AppGUID: strPtr("app"), AcceptsIncomplete: true})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Async).To(BeTrue())
			Eventually(func() osb.LastOperationState {
				op, err := c.PollBindingLastOperation(&osb.BindingLastOperationRequest{InstanceID: id, BindingID: bid,
					ServiceID: strPtr("redis"), PlanID: strPtr("redis-large"), OperationKey: res.OperationKey})
				Expect(err).NotTo(HaveOccurred())
				return op.State
			}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal(osb.StateSucceeded))
			got, err := c.GetBinding(&osb.GetBindingRequest{InstanceID: id, BindingID: bid})
			Expect(err).NotTo(HaveOccurred())
			return got.Credentials
		}
		a, b := bind("pb-a"), bind("pb-b")
		Expect(a["username"]).NotTo(Equal(b["username"]))
		Expect(a["password"]).NotTo(Equal(b["password"]))
		secrets, _, err := store.Secret(ctx, id+"/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(a["password"]).NotTo(Equal(secrets["password"]), "never the instance's password")
		_, manifest := director("/deployments/" + deployment)
		Expect(manifest).To(And(ContainSubstring(a["username"].(string)), ContainSubstring(b["username"].(string))),
			"the deployed manifest declares both users")

		res, err := c.Unbind(&osb.UnbindRequest{BindingID: "pb-a", InstanceID: id, ServiceID: "redis", PlanID: "redis-large",
			AcceptsIncomplete: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Async).To(BeTrue())
		Eventually(func() bool {
			op, err := c.PollBindingLastOperation(&osb.BindingLastOperationRequest{InstanceID: id, BindingID: "pb-a",
				ServiceID: strPtr("redis"), PlanID: strPtr("redis-large"), OperationKey: res.OperationKey})
			if osb.IsGoneError(err) {
				return true
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(op.State).NotTo(Equal(osb.StateFailed))
			return op.State == osb.StateSucceeded
		}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(BeTrue())
		_, manifest = director("/deployments/" + deployment)
		Expect(manifest).NotTo(ContainSubstring(a["username"].(string)), "the unbound user is gone from the service")
		Expect(manifest).To(ContainSubstring(b["username"].(string)))
		_, ok, err := store.Secret(ctx, id+"/bindings/pb-a")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "its secrets are gone from Vault")
		backups, err := store.Backups(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Join(backups, ",")).NotTo(BeEmpty())
		_, err = c.GetBinding(&osb.GetBindingRequest{InstanceID: id, BindingID: "pb-b"})
		Expect(err).NotTo(HaveOccurred(), "the other still works")

		res, err = c.Unbind(&osb.UnbindRequest{BindingID: "pb-b", InstanceID: id, ServiceID: "redis", PlanID: "redis-large",
			AcceptsIncomplete: true})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() bool {
			_, err := c.PollBindingLastOperation(&osb.BindingLastOperationRequest{InstanceID: id, BindingID: "pb-b",
				ServiceID: strPtr("redis"), PlanID: strPtr("redis-large"), OperationKey: res.OperationKey})
			return osb.IsGoneError(err)
		}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(BeTrue())
	})
})

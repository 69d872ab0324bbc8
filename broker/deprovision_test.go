package broker_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Deprovision", func() {
	var e *env
	ctx := context.Background()
	deprovision := func(id string) answer {
		return e.request("DELETE", instancePath(id)+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
	}

	BeforeEach(func() { e = newEnv() })

	It("deletes the deployment, then removes the record (backed up first), the secrets and the bindings", func() {
		e.provisioned("d-1", "redis-small")
		Expect(e.request("PUT", instancePath("d-1")+"/service_bindings/b-1",
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "app_guid": "app"}).Status).To(Equal(http.StatusCreated))

		a := deprovision("d-1")
		Expect(a.Status).To(Equal(http.StatusAccepted))
		Expect(a.Body).To(HaveKeyWithValue("operation", "deprovision"))
		op := e.record("d-1").LastOperation
		Expect(op.Type).To(Equal("deprovision"))
		Expect(op.TaskID).To(BeNumerically(">", 0))
		Expect(deprovision("d-1").Status).To(Equal(http.StatusAccepted), "a repeat while in progress")

		backupsBefore, err := e.store.Backups(ctx, "d-1")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() int { s, _, _ := e.lastOperation("d-1"); return s }).
			WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(http.StatusGone))
		Expect(e.record("d-1")).To(BeNil())
		backups, err := e.store.Backups(ctx, "d-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(backups).To(HaveLen(len(backupsBefore)+1), "the record was backed up before it went")
		for _, p := range []string{"d-1/credentials", "d-1/bindings/b-1"} {
			_, ok, err := e.store.Secret(ctx, p)
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeFalse(), p)
		}
		_, err = e.client.Manifest(ctx, "redis-small-d-1")
		Expect(err).To(MatchError(bosh.ErrDeploymentNotFound))
	})

	It("answers 410 for an unknown instance", func() {
		Expect(deprovision("nobody").Status).To(Equal(http.StatusGone))
	})

	It("deprovisions an instance whose provision failed (the deployment never existed)", func() {
		putRecord(e, "d-2", &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: "redis-small-d-2",
			LastOperation: &vault.Operation{Type: "provision", State: "failed"}})
		a := deprovision("d-2")
		Expect(a.Status).To(Equal(http.StatusOK), "the Director answers 404 before any task: gone at once")
		Expect(a.Body).To(BeEmpty())
		Expect(e.record("d-2")).To(BeNil())
		s, _, _ := e.lastOperation("d-2")
		Expect(s).To(Equal(http.StatusGone))
	})

	It("refuses a deprovision while the provision is in progress with 422 ConcurrencyError", func() {
		e.director.Knobs().SetTaskDuration(5 * time.Second)
		e.provision("d-3", "redis-small", nil)
		a := deprovision("d-3")
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity))
		Expect(a.Body).To(HaveKeyWithValue("error", "ConcurrencyError"))
	})

	It("keeps the record until the instance's secrets and bindings are gone, so that a failed cleanup is retried", func() {
		deletes := &failingDeletes{Store: e.store}
		e = newEnv(func(o *broker.Options) { deletes.Store = o.Store; o.Store = deletes })
		e.provisioned("d-5", "redis-small")
		Expect(e.request("PUT", instancePath("d-5")+"/service_bindings/b-5",
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "app_guid": "app"}).Status).To(Equal(http.StatusCreated))
		deletes.failing.Store(true)
		Expect(deprovision("d-5").Status).To(Equal(http.StatusAccepted))
		Eventually(func() string { _, _, desc := e.lastOperation("d-5"); return desc }).
			WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(ContainSubstring("removing the instance's records"))
		Expect(e.record("d-5")).NotTo(BeNil(), "the record stays while its secrets cannot be deleted")

		deletes.failing.Store(false)
		Eventually(func() int { s, _, _ := e.lastOperation("d-5"); return s }).
			WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(http.StatusGone))
		Expect(e.record("d-5")).To(BeNil())
		for _, p := range []string{"d-5/credentials", "d-5/bindings/b-5", "d-5/binding-ids"} {
			_, ok, err := e.store.Secret(ctx, p)
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeFalse(), p)
		}
	})

	It("backs up everything it deletes, so that restore brings the instance back whole", func() {
		e.provisioned("d-6", "redis-small")
		Expect(e.request("PUT", instancePath("d-6")+"/service_bindings/b-6",
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "app_guid": "app"}).Status).To(Equal(http.StatusCreated))
		creds, _, err := e.store.Secret(ctx, "d-6/credentials")
		Expect(err).NotTo(HaveOccurred())
		binding, _, err := e.store.Secret(ctx, "d-6/bindings/b-6")
		Expect(err).NotTo(HaveOccurred())
		Expect(deprovision("d-6").Status).To(Equal(http.StatusAccepted))
		Eventually(func() int { s, _, _ := e.lastOperation("d-6"); return s }).
			WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(http.StatusGone))
		_, ok, err := e.store.Secret(ctx, "d-6/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "deleted")

		backups, err := e.store.Backups(ctx, "d-6")
		Expect(err).NotTo(HaveOccurred())
		Expect(backups).NotTo(BeEmpty())
		parts, err := e.store.Archive.BackupParts(ctx, "d-6", backups[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(parts.Secrets).To(ContainElements("d-6/credentials", "d-6/binding-ids", "d-6/bindings/b-6"))
		Expect(e.store.Restores.Restore(ctx, "d-6", backups[0])).To(Succeed())
		Expect(e.record("d-6")).NotTo(BeNil())
		back, ok, err := e.store.Secret(ctx, "d-6/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(back).To(Equal(creds))
		back, _, err = e.store.Secret(ctx, "d-6/bindings/b-6")
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(binding))
	})

	It("backs up a binding before an unbind deletes it; a restore does not bring it back", func() {
		e.provisioned("d-7", "redis-small")
		Expect(e.request("PUT", instancePath("d-7")+"/service_bindings/b-7",
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "app_guid": "app"}).Status).To(Equal(http.StatusCreated))
		binding, _, err := e.store.Secret(ctx, "d-7/bindings/b-7")
		Expect(err).NotTo(HaveOccurred())
		a := e.request("DELETE", instancePath("d-7")+"/service_bindings/b-7?service_id=redis&plan_id=redis-small", nil)
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		backups, err := e.store.Backups(ctx, "d-7")
		Expect(err).NotTo(HaveOccurred())
		Expect(backups).NotTo(BeEmpty())
		parts, err := e.store.Archive.BackupParts(ctx, "d-7", backups[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(parts.Secrets).To(ContainElement("d-7/bindings/b-7"))
		kept, ok, err := e.store.BackupSecret(ctx, "d-7", backups[0], "d-7/bindings/b-7")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(kept["credentials"]).To(HaveKeyWithValue("password", binding["credentials"].(map[string]any)["password"]),
			"the backup holds the binding as it was")
		rep, err := e.store.Restores.RestoreReported(ctx, "d-7", backups[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Bindings).To(ConsistOf(And(HaveField("BindingID", "b-7"), HaveField("Outcome", "skipped"))))
		_, ok, err = e.store.Secret(ctx, "d-7/bindings/b-7")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "the platform unbound it: a restore does not bring its credentials back")
	})

	It("refuses clients that do not accept asynchronous operations with 422", func() {
		e.provisioned("d-4", "redis-small")
		Expect(e.request("DELETE", instancePath("d-4")+"?service_id=redis&plan_id=redis-small", nil).Status).
			To(Equal(http.StatusUnprocessableEntity))
	})
})

// failingDeletes is the real store whose removals fail while failing is
// set, as when Vault refuses writes for a while.
type failingDeletes struct {
	broker.Store
	failing atomic.Bool
}

func (f *failingDeletes) RemoveAll(ctx context.Context, id string) (string, error) {
	if f.failing.Load() {
		return "", errors.New("vault is refusing writes")
	}
	return f.Store.RemoveAll(ctx, id)
}

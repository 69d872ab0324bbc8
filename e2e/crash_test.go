package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	osb "sigs.k8s.io/go-open-service-broker-client/v2"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("A kill -9 in the middle of a provision", Ordered, func() {
	const id = "e2e-crash-1"
	var (
		d         *daemon
		contextID string
		taskID    int
	)
	ctx := context.Background()

	BeforeAll(func() {
		d = startDaemon("")
		DeferCleanup(func() { simAdmin(http.MethodPost, "/_sim/reset", map[string]any{}) })
	})

	It("leaves the record in Vault (in progress, task not yet recorded) and the task on the Director", func() {
		// The Director accepts the deploy, but reading the new task back hangs:
		// the daemon is killed after the task exists and before its id is recorded.
		simAdmin(http.MethodPost, "/_sim/config", map[string]any{
			"task_duration_ms": 3000,
			"failures":         []map[string]any{{"endpoint": "/tasks/:id", "method": "GET", "delay_ms": 60000}},
		})
		client := newOSBClient(d, brokerUser, brokerPass)
		go func() {
			defer GinkgoRecover()
			_, _ = client.ProvisionInstance(&osb.ProvisionRequest{InstanceID: id, AcceptsIncomplete: true,
				ServiceID: "redis", PlanID: "redis-large", OrganizationGUID: "org", SpaceGUID: "space"})
		}()
		Eventually(func() string {
			rec, err := store.Record(ctx, id)
			Expect(err).NotTo(HaveOccurred())
			if rec == nil || rec.LastOperation == nil {
				return ""
			}
			contextID = rec.LastOperation.ContextID
			return rec.LastOperation.State
		}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Equal("in progress"))
		Eventually(func() int {
			code, body := director("/tasks?context_id=" + url.QueryEscape(contextID))
			Expect(code).To(Equal(http.StatusOK), body)
			var tasks []struct {
				ID int `json:"id"`
			}
			Expect(json.Unmarshal([]byte(body), &tasks)).To(Succeed())
			if len(tasks) == 0 {
				return 0
			}
			taskID = tasks[0].ID
			return taskID
		}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).ShouldNot(BeZero())

		d.session.Kill()
		Eventually(d.session).WithTimeout(10 * time.Second).Should(gexec.Exit())
		rec, err := store.Record(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.LastOperation.TaskID).To(BeZero(), "the daemon died before recording the task")
	})

	It("answers last_operation after a restart from Vault and the Director, and succeeds", func() {
		simAdmin(http.MethodPost, "/_sim/config", map[string]any{"failures": []map[string]any{}})
		d.start()
		d.waitReady()
		client := newOSBClient(d, brokerUser, brokerPass)
		eventuallySucceeded(client, id)
		rec, err := store.Record(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.LastOperation.TaskID).To(Equal(taskID), "the task was found by its context id")
		Expect(rec.LastOperation.State).To(Equal("succeeded"))
	})

	It("also survives a kill -9 after the task was recorded", func() {
		const id2 = "e2e-crash-2"
		simAdmin(http.MethodPost, "/_sim/config", map[string]any{"task_duration_ms": 3000})
		client := newOSBClient(d, brokerUser, brokerPass)
		res, err := client.ProvisionInstance(&osb.ProvisionRequest{InstanceID: id2, AcceptsIncomplete: true,
			ServiceID: "redis", PlanID: "redis-small", OrganizationGUID: "org", SpaceGUID: "space"})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Async).To(BeTrue())
		state, _, _ := lastOperation(client, id2)
		Expect(state).To(Equal(osb.StateInProgress))

		d.session.Kill()
		Eventually(d.session).WithTimeout(10 * time.Second).Should(gexec.Exit())
		var rec *vault.Record
		rec, err = store.Record(ctx, id2)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.LastOperation.TaskID).NotTo(BeZero())

		d.start()
		d.waitReady()
		eventuallySucceeded(newOSBClient(d, brokerUser, brokerPass), id2)
	})
})

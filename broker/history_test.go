package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// history returns the instance's history from Vault, oldest first.
func history(e *env, id string) []vault.Event {
	GinkgoHelper()
	events, err := e.store.Events(context.Background(), id, 0)
	Expect(err).NotTo(HaveOccurred())
	slices.Reverse(events)
	return events
}

func kinds(events []vault.Event) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev.Kind
	}
	return out
}

// encoded is the JSON of events, to look for what must not be in them.
func encoded(events []vault.Event) string {
	GinkgoHelper()
	data, err := json.Marshal(events)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}

var _ = Describe("History", func() {
	var e *env
	ctx := context.Background()
	deprovision := func(id string) answer {
		return e.request("DELETE", instancePath(id)+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
	}
	bind := func(id, bid string) answer {
		return e.request("PUT", instancePath(id)+"/service_bindings/"+bid,
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "app_guid": "app-1"})
	}
	unbind := func(id, bid string) answer {
		return e.request("DELETE", instancePath(id)+"/service_bindings/"+bid+"?service_id=redis&plan_id=redis-small", nil)
	}

	BeforeEach(func() { e = newEnv() })

	It("records a provision with its task id, then its success as last_operation saw it, and no parameter", func() {
		e.provision("h-1", "redis-small", map[string]any{"note": "a-parameter-value"})
		task := strconv.Itoa(e.record("h-1").LastOperation.TaskID)
		Expect(task).NotTo(Equal("0"))
		e.eventuallyState("h-1", "succeeded")
		_, _, desc := e.lastOperation("h-1")

		events := history(e, "h-1")
		Expect(kinds(events)).To(Equal([]string{"provision", "operation_succeeded"}), "once, in order, however often polled")
		Expect(events[0].Actor).To(Equal("broker"))
		Expect(events[0].Deployment).To(Equal("redis-small-h-1"))
		Expect(events[0].Details).To(Equal(map[string]string{"service_id": "redis", "plan_id": "redis-small", "task_id": task}))
		Expect(events[1].Actor).To(Equal("broker"))
		Expect(events[1].Details).To(Equal(map[string]string{"type": "provision", "task_id": task}))
		Expect(events[1].Message).To(Equal(desc))
		Expect(events[1].Time).To(BeTemporally(">", events[0].Time))

		secrets, _, err := e.store.Secret(ctx, "h-1/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(secrets["password"]).NotTo(BeEmpty())
		Expect(encoded(events)).NotTo(ContainSubstring("a-parameter-value"))
		Expect(encoded(events)).NotTo(ContainSubstring(secrets["password"].(string)))
	})

	It("records an update with its plan change", func() {
		e.provisioned("h-2", "redis-small")
		a := e.request("PATCH", instancePath("h-2")+"?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "plan_id": "redis-large"})
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		task := strconv.Itoa(e.record("h-2").LastOperation.TaskID)
		e.eventuallyState("h-2", "succeeded")

		events := history(e, "h-2")
		Expect(kinds(events)).To(Equal([]string{"provision", "operation_succeeded", "update", "operation_succeeded"}))
		Expect(events[2].Details).To(Equal(map[string]string{
			"service_id": "redis", "plan_id": "redis-large", "previous_plan_id": "redis-small", "task_id": task,
			"changes": "1", "diff_properties": "plan_id", "backup": events[2].Details["backup"]}))
		Expect(events[2].Details["backup"]).NotTo(BeEmpty(), "what ran is backed up before the deploy")
		Expect(events[3].Details).To(HaveKeyWithValue("type", "update"))
	})

	It("records a bind and an unbind with the binding's id and none of its credentials", func() {
		e.provisioned("h-3", "redis-small")
		a := bind("h-3", "hb-1")
		Expect(a.Status).To(Equal(http.StatusCreated), a.Raw)
		Expect(bind("h-3", "hb-1").Status).To(Equal(http.StatusOK), "a repeat creates nothing, records nothing")
		creds := a.Body["credentials"].(map[string]any)
		Expect(unbind("h-3", "hb-1").Status).To(Equal(http.StatusOK))

		events := history(e, "h-3")
		Expect(kinds(events)).To(Equal([]string{"provision", "operation_succeeded", "bind", "unbind"}))
		Expect(events[2].Details).To(Equal(map[string]string{"binding_id": "hb-1"}))
		Expect(events[2].Deployment).To(Equal("redis-small-h-3"))
		Expect(events[3].Details).To(Equal(map[string]string{"binding_id": "hb-1"}))
		for _, secret := range []string{creds["password"].(string), creds["host"].(string)} {
			Expect(secret).NotTo(BeEmpty())
			Expect(encoded(events)).NotTo(ContainSubstring(secret))
		}
	})

	It("keeps the history of a deprovisioned instance after its record is gone", func() {
		e.provisioned("h-4", "redis-small")
		Expect(deprovision("h-4").Status).To(Equal(http.StatusAccepted))
		task := strconv.Itoa(e.record("h-4").LastOperation.TaskID)
		Eventually(func() int { s, _, _ := e.lastOperation("h-4"); return s }).
			WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(http.StatusGone))
		Expect(e.record("h-4")).To(BeNil())

		events := history(e, "h-4")
		Expect(kinds(events)).To(Equal([]string{"provision", "operation_succeeded", "deprovision", "operation_succeeded"}))
		Expect(events[2].Details).To(Equal(map[string]string{"task_id": task}))
		Expect(events[2].Deployment).To(Equal("redis-small-h-4"))
		Expect(events[3].Details).To(Equal(map[string]string{"type": "deprovision", "task_id": task}))
		Expect(events[3].Message).To(ContainSubstring("deprovision succeeded"))
	})

	It("records a failed start, dated after the operation it ends", func() {
		e.director.Faults().Inject(simFailure("POST /deployments"))
		e.provision("h-6", "redis-small", nil)
		e.eventuallyState("h-6", "failed")
		_, _, desc := e.lastOperation("h-6")

		events := history(e, "h-6")
		Expect(kinds(events)).To(Equal([]string{"provision", "operation_failed"}))
		Expect(events[0].Details).NotTo(HaveKey("task_id"), "no task was started")
		Expect(events[1].Message).To(Equal(desc))
		Expect(events[1].Details).To(Equal(map[string]string{"type": "provision"}))
	})

	It("answers the platform as usual when the history cannot be appended to, and logs why", func() {
		logs := gbytes.NewBuffer()
		failing := &failingAppends{}
		e = newEnv(func(o *broker.Options) {
			failing.Store = o.Store
			o.Store = failing
			o.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(GinkgoWriter, logs), nil))
		})
		failing.failing.Store(true)

		e.provisioned("h-5", "redis-small")
		Expect(bind("h-5", "hb-5").Status).To(Equal(http.StatusCreated))
		Expect(unbind("h-5", "hb-5").Status).To(Equal(http.StatusOK))
		Expect(deprovision("h-5").Status).To(Equal(http.StatusAccepted))
		e.eventuallyState("h-5", "succeeded") // the poll that finds the task done
		Expect(e.record("h-5")).To(BeNil())
		// Without its deprovision event the instance cannot be told from one
		// that never was: later polls answer 404, not 410.
		status, _, _ := e.lastOperation("h-5")
		Expect(status).To(Equal(http.StatusNotFound))

		Expect(history(e, "h-5")).To(BeEmpty())
		Expect(failing.refused.Load()).To(BeNumerically("==", 6), "provision, its success, bind, unbind, deprovision, its success")
		Expect(string(logs.Contents())).To(ContainSubstring(
			`level=WARN msg="could not append to the instance's history" instance=h-5 event=provision`))
	})
})

// failingAppends is the real store whose history appends fail while
// failing is set, as when Vault refuses writes.
type failingAppends struct {
	broker.Store
	failing atomic.Bool
	refused atomic.Int64
}

func (f *failingAppends) AppendEvent(ctx context.Context, id string, ev vault.Event) error {
	if f.failing.Load() {
		f.refused.Add(1)
		return errors.New("vault is refusing writes")
	}
	return f.Store.AppendEvent(ctx, id, ev)
}

var _ = Describe("an instance's history the broker appends to", func() {
	It("is pruned to the retention after each event: binds and unbinds do not grow it for good", func() {
		e := newEnv(func(o *broker.Options) { o.History = vault.HistoryOptions{Keep: 10} })
		e.provisioned("h-1", "redis-large")
		for i := range 15 {
			bid := fmt.Sprintf("b-%d", i)
			bind := e.request("PUT", instancePath("h-1")+"/service_bindings/"+bid, map[string]any{"service_id": "redis", "plan_id": "redis-large"})
			Expect(bind.Status).To(Equal(http.StatusCreated), bind.Raw)
			Expect(e.request("DELETE", instancePath("h-1")+"/service_bindings/"+bid+"?service_id=redis&plan_id=redis-large", nil).Status).
				To(Equal(http.StatusOK))
		}
		events, err := e.store.Events(context.Background(), "h-1", 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(events).To(HaveLen(10), "30 binds and unbinds, the provision and its outcome: the newest 10 kept")
		Expect(events[0].Kind).To(Equal("unbind"))
	})
})

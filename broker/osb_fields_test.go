package broker_test

import (
	"net/http"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

// The OSB fields Cloud Foundry reads beyond what brokerapi gives:
// last_operation's Retry-After, instance_usable and update_repeatable, and
// the plan's version among the instance's metadata labels.
var _ = Describe("last_operation's hints", func() {
	var e *env

	BeforeEach(func() { e = newEnv() })

	// poll is one last_operation answer with its headers.
	poll := func(id string) answer {
		GinkgoHelper()
		return e.request("GET", instancePath(id)+"/last_operation", nil)
	}
	// failedPoll waits for id's operation to fail and returns the answer.
	failedPoll := func(id string) answer {
		GinkgoHelper()
		e.eventuallyState(id, "failed")
		return poll(id)
	}

	It("asks the platform to wait (Retry-After) while an operation is in progress: the plan's polling interval at first, none once it ended", func() {
		e.director.Knobs().SetTaskDuration(3 * time.Second)
		e.provision("ra-1", "redis-small", nil)
		a := poll("ra-1")
		Expect(a.Body).To(HaveKeyWithValue("state", "in progress"))
		Expect(a.Header.Get("Retry-After")).To(Equal(strconv.Itoa(catalog.DefaultPollingInterval)), "redis-small has no polling_interval")
		e.provision("ra-2", "redis-large", nil)
		Expect(poll("ra-2").Header.Get("Retry-After")).To(Equal("3"), "redis-large's polling_interval")
		e.eventuallyState("ra-1", "succeeded")
		Expect(poll("ra-1").Header).NotTo(HaveKey("Retry-After"))
	})

	It("says a failed update left the instance usable and that the update may be sent again", func() {
		e.provisioned("fu-1", "redis-small")
		e.director.FailNextTask("redis-small-fu-1")
		a := e.request("PATCH", instancePath("fu-1")+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "parameters": map[string]any{"maxmemory": "2gb"}})
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		got := failedPoll("fu-1")
		Expect(got.Body).To(HaveKeyWithValue("instance_usable", true))
		Expect(got.Body).To(HaveKeyWithValue("update_repeatable", true))
		Expect(e.request("PATCH", instancePath("fu-1")+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "parameters": map[string]any{"maxmemory": "2gb"}}).Status).
			To(Equal(http.StatusAccepted), "repeatable: the same update deploys again")
		e.eventuallyState("fu-1", "succeeded")
	})

	It("says nothing of usability for a failed provision (the spec: MUST NOT be present)", func() {
		e.director.FailNextTask("redis-small-fp-1")
		e.provision("fp-1", "redis-small", nil)
		got := failedPoll("fp-1")
		Expect(got.Body).NotTo(HaveKey("instance_usable"))
		Expect(got.Body).NotTo(HaveKey("update_repeatable"))
	})

	It("says a deprovision whose deletion failed left the instance unusable (part of it may be gone), without update_repeatable", func() {
		e.provisioned("fd-1", "redis-small")
		e.director.FailNextTask("redis-small-fd-1")
		a := e.request("DELETE", instancePath("fd-1")+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		got := failedPoll("fd-1")
		Expect(got.Body).To(HaveKeyWithValue("instance_usable", false))
		Expect(got.Body).NotTo(HaveKey("update_repeatable"))
	})

	It("says a deprovision stopped by its pre-delete errand left the instance usable (nothing was deleted)", func() {
		e := lifecycleEnv(nil, []string{"redis"}, sim.ErrandOutcome{Errand: "redis", ExitCode: 1, Stderr: "data not drained"})
		e.provisioned("fe-1", "redis-small")
		Expect(e.request("DELETE", instancePath("fe-1")+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil).Status).To(Equal(http.StatusAccepted))
		e.eventuallyState("fe-1", "failed")
		got := e.request("GET", instancePath("fe-1")+"/last_operation", nil)
		Expect(got.Body).To(HaveKeyWithValue("instance_usable", true), got.Raw)
		Expect(e.director.Stats().Deployments).To(Equal(1))
	})
})

var _ = Describe("the plan's version in the instance's metadata labels (OSB 2.16)", func() {
	It("is in the provision's, the update's and the fetch's answers when the plan declares maintenance_info", func() {
		e := newEnv(func(o *broker.Options) {
			for i := range o.Catalog.Services {
				for j := range o.Catalog.Services[i].Plans {
					o.Catalog.Services[i].Plans[j].MaintenanceInfo = &catalog.MaintenanceInfo{Version: "1.4.0"}
				}
			}
		})
		labels := HaveKeyWithValue("metadata", HaveKeyWithValue("labels", HaveKeyWithValue("maintenance_info_version", "1.4.0")))
		a := e.request("PUT", instancePath("lb-1")+"?accepts_incomplete=true", provisionBody("redis-small", nil))
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Expect(a.Body).To(labels, a.Raw)
		e.eventuallyState("lb-1", "succeeded")
		Expect(e.request("GET", instancePath("lb-1"), nil).Body).To(labels)
		u := e.request("PATCH", instancePath("lb-1")+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "plan_id": "redis-large"})
		Expect(u.Status).To(Equal(http.StatusAccepted), u.Raw)
		Expect(u.Body).To(labels, u.Raw)
	})

	It("is absent when the plan declares no maintenance_info", func() {
		e := newEnv()
		a := e.request("PUT", instancePath("lb-2")+"?accepts_incomplete=true", provisionBody("redis-small", nil))
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Expect(a.Body).NotTo(HaveKey("metadata"))
	})
})

package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// hook keeps the webhook events a daemon posts (signatures are the notify
// suite's business).
type hook struct {
	mu     sync.Mutex
	events []map[string]any
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var e map[string]any
	if json.Unmarshal(body, &e) == nil {
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *hook) of(typ, instance string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, e := range h.events {
		if e["event"] == typ && e["instance_id"] == instance {
			n++
		}
	}
	return n
}

var _ = Describe("VM health through the daemon", func() {
	It("shows an instance whose agent stops answering unhealthy (instance view, status, gauge, one webhook event), then recovered", func() {
		h := &hook{}
		srv := httptest.NewServer(h)
		DeferCleanup(srv.Close)
		d := startDaemon("notifications:\n  webhooks:\n  - url: " + srv.URL + "\n    events: [unhealthy, recovered]\n    secret: e2e-hook-secret\n")
		d.reconcile() // records the seeded instances

		// A seeded deployment, its instance (the name tells it) and the first VM's instance id.
		req, err := http.NewRequest(http.MethodGet, directorURL+"/deployments", nil)
		Expect(err).NotTo(HaveOccurred())
		req.SetBasicAuth(simUser, simPass)
		res, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		var deps []struct{ Name string }
		Expect(json.NewDecoder(res.Body).Decode(&deps)).To(Succeed())
		res.Body.Close()
		var name string
		for _, dep := range deps {
			if strings.HasPrefix(dep.Name, "redis-small-") {
				name = dep.Name
			}
		}
		Expect(name).NotTo(BeEmpty())
		instance := strings.TrimPrefix(name, "redis-small-")
		req, _ = http.NewRequest(http.MethodGet, directorURL+"/deployments/"+name+"/vms", nil)
		req.SetBasicAuth(simUser, simPass)
		res, err = http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		var vms []struct{ ID string }
		Expect(json.NewDecoder(res.Body).Decode(&vms)).To(Succeed())
		res.Body.Close()
		Expect(vms).NotTo(BeEmpty())

		simAdmin(http.MethodPost, "/_sim/agent", map[string]string{"deployment": name, "instance": vms[0].ID, "agent": "unresponsive agent"})
		d.reconcile() // the alert names it: the run hands it to the health loop, which asks at once
		var body string
		Eventually(func() map[string]any {
			var code int
			code, body = d.get("/b/instances/"+instance, opUser, opPass)
			Expect(code).To(Equal(http.StatusOK), body)
			return decode(body)
		}).WithTimeout(10 * time.Second).Should(HaveKeyWithValue("health", And(HaveKeyWithValue("status", "unhealthy"),
			HaveKeyWithValue("reason", ContainSubstring("unresponsive agent")), HaveKey("since"))))
		_, body = d.get("/b/reconcile", opUser, opPass)
		Expect(decode(body)["health"]).To(And(HaveKeyWithValue("instances", ContainElement(HaveKeyWithValue("instance_id", instance))),
			HaveKeyWithValue("loop", And(HaveKeyWithValue("leading", true), HaveKeyWithValue("tasks_at_once", 1.0)))))
		_, metrics := d.get("/metrics", "", "")
		Expect(metrics).To(MatchRegexp(`(?m)^blacksmith_instances_unhealthy [1-9]`))
		Eventually(func() int { return h.of("unhealthy", instance) }).WithTimeout(10 * time.Second).Should(Equal(1))

		simAdmin(http.MethodPost, "/_sim/resurrect", map[string]string{"deployment": name, "instance": vms[0].ID})
		d.reconcile()
		Eventually(func() map[string]any {
			_, body = d.get("/b/instances/"+instance, opUser, opPass)
			return decode(body)
		}).WithTimeout(10 * time.Second).Should(HaveKeyWithValue("health", HaveKeyWithValue("status", "healthy")))
		_, metrics = d.get("/metrics", "", "")
		Expect(metrics).To(MatchRegexp(`(?m)^blacksmith_instances_unhealthy 0$`))
		Eventually(func() int { return h.of("recovered", instance) }).WithTimeout(10 * time.Second).Should(Equal(1))
		Consistently(func() int { return h.of("unhealthy", instance) }, time.Second).Should(Equal(1), "announced once")
	})
})

package sim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("the /_sim admin API", func() {
	var (
		d     *sim.Director
		c     *client
		admin *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: -1})
		c = newClient(d)
		admin = c.anonymous()
		admin.contentType = "application/json"
	})

	post := func(path, body string) reply { return admin.do(http.MethodPost, path, []byte(body)) }

	It("reports stats without authentication and resets them", func() {
		c.get("/deployments")
		stats := admin.getJSON("/_sim/stats").(map[string]any)
		Expect(stats).To(HaveKeyWithValue("requests", map[string]any{"GET /deployments": 1.0}))
		Expect(stats).To(HaveKeyWithValue("tasks", 0.0))
		Expect(post("/_sim/reset", "").status).To(Equal(http.StatusNoContent))
		Expect(admin.getJSON("/_sim/stats")).To(HaveKeyWithValue("requests", BeEmpty()))
	})

	It("sets latency, task duration, token lifetime, events kept and failures", func() {
		Expect(admin.getJSON("/_sim/config")).To(HaveKeyWithValue("events_kept", 10000.0))
		r := post("/_sim/config", `{"latency_ms": 5, "task_duration_ms": 50, "token_ttl_s": 60, "events_kept": 50,
			"failures": [{"endpoint": "/deployments", "method": "GET", "status": 502, "count": 1}]}`)
		Expect(r.status).To(Equal(http.StatusOK))
		Expect(d.Knobs().EventsKept()).To(Equal(50))
		Expect(admin.getJSON("/_sim/config")).To(Equal(map[string]any{"latency_ms": 5.0, "task_duration_ms": 50.0,
			"token_ttl_s": 60.0, "events_kept": 50.0, "record_events": true, "failures": []any{map[string]any{"endpoint": "/deployments", "method": "GET",
				"rate": 0.0, "status": 502.0, "delay_ms": 0.0, "count": 1.0}}}))
		Expect(c.get("/deployments").status).To(Equal(http.StatusBadGateway))
		Expect(c.get("/deployments").status).To(Equal(http.StatusOK))

		Expect(post("/_sim/config", `{"failures": [{"endpoint": "/info", "delay_ms": 1}]}`).status).To(Equal(http.StatusOK))
		Expect(d.Faults().List()).To(Equal([]sim.Failure{{Endpoint: "/info", Delay: time.Millisecond}}))
		Expect(post("/_sim/config", `{"failures": []}`).status).To(Equal(http.StatusOK))
		Expect(d.Faults().List()).To(BeEmpty())
		Expect(post("/_sim/config", `{"latency": 5}`).status).To(Equal(http.StatusBadRequest), "unknown fields are refused")
	})

	DescribeTable("refuses a config it cannot apply, naming what is wrong and changing nothing",
		func(body, problem string) {
			Expect(post("/_sim/config", `{"latency_ms": 7, "failures": [{"endpoint": "/info", "status": 503}]}`).status).To(Equal(http.StatusOK))
			before := admin.getJSON("/_sim/config")
			r := post("/_sim/config", body)
			Expect(r.status).To(Equal(http.StatusBadRequest))
			Expect(r.json()).To(HaveKeyWithValue("error", ContainSubstring(problem)))
			Expect(admin.getJSON("/_sim/config")).To(Equal(before))
		},
		Entry("a negative latency", `{"latency_ms": -5, "failures": []}`, "latency_ms -5 is negative"),
		Entry("a negative task duration", `{"task_duration_ms": -1}`, "task_duration_ms -1 is negative"),
		Entry("a token lifetime under a second", `{"token_ttl_s": 0}`, "token_ttl_s 0 is less than 1"),
		Entry("no events kept", `{"latency_ms": 1, "events_kept": 0}`, "events_kept 0 is less than 1"),
		Entry("a failure status no server can send", `{"latency_ms": 1, "failures": [{"status": 42}]}`, "status 42 is not between 200 and 599"),
		Entry("a failure rate above 1", `{"failures": [{"endpoint": "/info", "rate": 5}]}`, "rate 5 is not between 0 and 1"),
		Entry("a negative delay", `{"failures": [{"delay_ms": -10}]}`, "delay -10ms is negative"),
	)

	DescribeTable("refuses a seed it cannot make, naming what is wrong",
		func(body, problem string) {
			r := post("/_sim/seed", body)
			Expect(r.status).To(Equal(http.StatusBadRequest))
			Expect(r.json()).To(HaveKeyWithValue("error", ContainSubstring(problem)))
			Expect(d.Stats().Deployments).To(BeZero())
		},
		Entry("no count", `{}`, "count 0 is not between 1 and 100000"),
		Entry("too many", `{"count": 100001}`, "count 100001 is not between 1 and 100000"),
		Entry("a plan without release", `{"count": 1, "plans": [{"plan_id": "p"}]}`, "the release is required"),
		Entry("a plan whose release breaks YAML", `{"count": 1, "plans": [{"plan_id": "p", "release": "x\ny: 1"}]}`, "use letters, digits"),
	)

	It("seeds deployments", func() {
		r := post("/_sim/seed", `{"count": 5, "plans": [{"service_id": "redis", "plan_id": "redis-tiny", "release": "redis"}]}`)
		Expect(r.status).To(Equal(http.StatusOK))
		var body struct{ Names []string }
		Expect(json.Unmarshal(r.body, &body)).To(Succeed())
		Expect(body.Names).To(HaveLen(5))
		Expect(body.Names[0]).To(MatchRegexp(`^redis-tiny-[0-9a-f-]{36}$`))
		Expect(c.getJSON("/deployments")).To(HaveLen(5))
	})

	It("puts and removes deployments behind the broker's back", func() {
		Expect(admin.do(http.MethodPut, "/_sim/deployments", []byte(redisManifest("r1", "1"))).status).To(Equal(http.StatusNoContent))
		Expect(admin.do(http.MethodPut, "/_sim/deployments", []byte(redisManifest("r2", "1"))).status).To(Equal(http.StatusNoContent))
		Expect(c.getJSON("/deployments/r1")).To(Equal(map[string]any{"manifest": redisManifest("r1", "1")}))
		Expect(admin.do(http.MethodPut, "/_sim/deployments", []byte("no: name\n")).status).To(Equal(http.StatusBadRequest))
		Expect(admin.do(http.MethodDelete, "/_sim/deployments/r1", nil).status).To(Equal(http.StatusNoContent))
		Expect(c.getJSON("/deployments")).To(HaveLen(1))
		Expect(admin.do(http.MethodDelete, "/_sim/deployments", nil).status).To(Equal(http.StatusNoContent))
		Expect(c.getJSON("/deployments")).To(BeEmpty())
		Expect(actionsOf(c.getJSON("/events?user=admin&object_type=deployment"))).To(Equal([]string{
			"delete r2", "delete r1 <-", "delete r1", "create r2 <-", "create r2", "create r1 <-", "create r1"}),
			"a put is a create or update with its end, a removal a delete with its end, removing all one delete each")
	})

	It("makes the next task fail, replaces the cloud config and revokes tokens", func() {
		Expect(post("/_sim/next-task", `{"deployment": "r1", "state": "error"}`).status).To(Equal(http.StatusNoContent))
		Expect(post("/_sim/next-task", `{"state": "done"}`).status).To(Equal(http.StatusBadRequest))
		Expect(c.waitTask(c.deploy(redisManifest("r1", "1")))["state"]).To(Equal("error"))
		Expect(c.waitTask(c.deploy(redisManifest("r1", "1")))["state"]).To(Equal("done"))

		Expect(admin.do(http.MethodPut, "/_sim/cloud-config", []byte("azs: []\n")).status).To(Equal(http.StatusNoContent))
		Expect(c.getJSON("/deployments")).To(ConsistOf(HaveKeyWithValue("cloud_config", "outdated")))

		u := start(sim.Options{Auth: sim.AuthUAA})
		uc := newClient(u).anonymous()
		uc.bearer = token(uc, "blacksmith", "secret")["access_token"].(string)
		Expect(uc.get("/deployments").status).To(Equal(http.StatusOK))
		Expect(uc.do(http.MethodPost, "/_sim/revoke-tokens", nil).status).To(Equal(http.StatusNoContent))
		Expect(uc.get("/deployments").status).To(Equal(http.StatusUnauthorized))
	})

	It("makes an agent stop answering and resurrects its VM", func() {
		Expect(d.PutDeployment(redisManifest("r1", "1"))).To(Succeed())
		id := d.InstanceIDs("r1", "redis")[0]
		post := func(path, body string) int {
			res, err := http.Post(d.URL()+path, "application/json", strings.NewReader(body))
			Expect(err).NotTo(HaveOccurred())
			res.Body.Close()
			return res.StatusCode
		}
		Expect(post("/_sim/agent", `{"deployment":"r1","instance":"`+id+`","agent":"unresponsive agent"}`)).To(Equal(http.StatusNoContent))
		Expect(post("/_sim/agent", `{"deployment":"r1","instance":"nope"}`)).To(Equal(http.StatusBadRequest))
		Expect(post("/_sim/agent", `{"deployment":"r1","instance":"`+id+`","agent":"asleep"}`)).To(Equal(http.StatusBadRequest))
		Expect(post("/_sim/resurrect", `{"deployment":"r1","instance":"`+id+`"}`)).To(Equal(http.StatusNoContent))
		Expect(post("/_sim/resurrect", `{"deployment":"r1","instance":"nope"}`)).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("the task log", func() {
	It("lists the tasks since the last reset with when each began and ended, and how many overlapped", func() {
		d, err := sim.New(sim.Options{TaskDuration: 100 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(d.Close)
		names := d.SeedDeployments(3, nil)
		c := newClient(d)
		for _, n := range names[:2] {
			Expect(c.do("DELETE", "/deployments/"+n, nil).status).To(Equal(http.StatusFound))
		}
		Eventually(func() int { return d.Stats().TaskStates[sim.StateDone] }, 5*time.Second, 20*time.Millisecond).Should(Equal(2))
		log := d.TaskLog()
		Expect(log).To(HaveLen(2))
		Expect(log[0].Deployment).To(Equal(names[0]))
		Expect(log[0].Ended.Sub(log[0].Began)).To(BeNumerically(">=", 100*time.Millisecond))
		Expect(log[0].Created).NotTo(BeZero())
		Expect(log[0].Began).NotTo(BeTemporally("<", log[0].Created), "queued from its creation until a worker takes it")
		Expect(sim.MaxOverlap(log)).To(Equal(2), "both ran at once")
		Expect(sim.MaxOverlap([]sim.TaskEntry{log[0], {Began: log[0].Ended, Ended: log[0].Ended.Add(time.Second)}})).To(Equal(1),
			"one that begins as the other ends does not overlap it")
		d.ResetStats()
		Expect(d.TaskLog()).To(BeEmpty())
	})
})

var _ = Describe("the tasks cleanup", func() {
	It("keeps the newest ended tasks of each type, as the Director's scheduled cleanup does: the others are gone from GET /tasks and answer 404", func() {
		d := start(sim.Options{TaskDuration: -1})
		c := newClient(d)
		admin := c.anonymous()
		admin.contentType = "application/json"
		var ids []int
		for _, v := range []string{"16.0.0", "16.1.0", "16.2.0", "16.3.0"} {
			id := c.deploy(redisManifest("r1", v))
			c.waitTask(id)
			ids = append(ids, id)
		}
		r := admin.do(http.MethodPost, "/_sim/tasks-cleanup", []byte(`{"max_tasks": 2}`))
		Expect(r.status).To(Equal(http.StatusOK))
		Expect(string(r.body)).To(MatchJSON(`{"removed": 2}`))
		Expect(c.getJSON("/tasks?deployment=r1")).To(HaveLen(2))
		Expect(c.get(fmt.Sprintf("/tasks/%d", ids[0])).status).To(Equal(http.StatusNotFound))
		Expect(c.get(fmt.Sprintf("/tasks/%d", ids[3])).status).To(Equal(http.StatusOK))
		Expect(admin.do(http.MethodPost, "/_sim/tasks-cleanup", []byte(`{"max_tasks": -1}`)).status).To(Equal(http.StatusBadRequest))
	})
})

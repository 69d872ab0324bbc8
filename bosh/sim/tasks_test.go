package sim_test

import (
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("tasks", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: 10 * time.Millisecond, Workers: 1, LockTimeout: time.Second})
		c = newClient(d)
	})

	It("go queued -> processing -> done, locking the deployment while they run", func() {
		d.Knobs().SetTaskDuration(400 * time.Millisecond)
		first := c.deploy(redisManifest("r1", "1"))
		second := c.deploy(redisManifest("r2", "1"))
		Eventually(func() string { return c.taskState(first) }).Should(Equal("processing"))
		Expect(c.taskState(second)).To(Equal("queued"), "one worker: the second task waits")
		Expect(c.task(second)["started_at"]).To(BeNil())
		Expect(c.getJSON("/deployments")).To(ContainElement(And(HaveKeyWithValue("name", "r1"), HaveKeyWithValue("locked", true))))
		Expect(c.getJSON("/locks")).To(ConsistOf(HaveKeyWithValue("resource", []any{"r1"})))

		Expect(c.waitTask(first)["state"]).To(Equal("done"))
		Eventually(func() string { return c.taskState(second) }).Should(Equal("processing"))
		Expect(c.getJSON("/deployments")).To(ContainElement(And(HaveKeyWithValue("name", "r1"), HaveKeyWithValue("locked", false))))
		Expect(c.waitTask(second)["state"]).To(Equal("done"))
		Expect(c.getJSON("/locks")).To(BeEmpty())
	})

	It("give their workers to queued tasks oldest first, as the Director's workers do", func() {
		d.Knobs().SetTaskDuration(time.Hour)
		blocker := c.deploy(redisManifest("r0", "1"))
		Eventually(func() string { return c.taskState(blocker) }).Should(Equal("processing"))
		d.Knobs().SetTaskDuration(0)
		var queued []int
		for i := range 12 {
			queued = append(queued, c.deploy(redisManifest("q"+itoa(i), "1")))
		}
		Expect(d.CancelTask(blocker)).To(Succeed())
		for _, id := range queued {
			Expect(c.waitTask(id)["state"]).To(Equal("done"))
		}
		began := map[int]time.Time{}
		for _, e := range d.TaskLog() {
			began[e.ID] = e.Began
		}
		for i := 1; i < len(queued); i++ {
			Expect(began[queued[i]].Before(began[queued[i-1]])).To(BeFalse(), "task %d began before the older task %d", queued[i], queued[i-1])
		}
	})

	It("numbers tasks in increasing order", func() {
		a, b := c.deploy(redisManifest("r1", "1")), c.deleteDeployment("r1")
		Expect(b).To(BeNumerically(">", a))
	})

	It("end in error for an invalid YAML manifest, with the error in the event output", func() {
		id := c.deploy("name: [unclosed\n")
		t := c.waitTask(id)
		Expect(t["state"]).To(Equal("error"))
		Expect(t["result"]).To(HavePrefix("Incorrect YAML structure of the uploaded manifest"))
		lines := ndjson(c.get("/tasks/" + itoa(id) + "/output?type=event").body)
		Expect(lines[len(lines)-1]).To(HaveKeyWithValue("error", HaveKeyWithValue("code", 440001.0)))
	})

	It("end in error for a manifest naming an undeclared release, leaving a new deployment without manifest", func() {
		bad := "name: r1\nreleases: []\ninstance_groups:\n- name: g\n  instances: 1\n  jobs: [{name: j, release: nope}]\n"
		t := c.waitTask(c.deploy(bad))
		Expect(t["state"]).To(Equal("error"))
		Expect(t["result"]).To(ContainSubstring("unknown release 'nope'"))
		Expect(c.getJSON("/deployments/r1")).To(Equal(map[string]any{"manifest": ""}))
		Expect(c.getJSON("/deployments/r1/vms")).To(BeEmpty())
	})

	It("end in error for an instance group larger than the simulator serves", func() {
		big := strings.Replace(redisManifest("r1", "1"), "instances: 1\n  azs: [z1]\n  jobs:\n  - name: redis", "instances: 1001\n  azs: [z1]\n  jobs:\n  - name: redis", 1)
		Expect(big).To(ContainSubstring("instances: 1001"))
		t := c.waitTask(c.deploy(big))
		Expect(t["state"]).To(Equal("error"))
		Expect(t["result"]).To(Equal("Instance group 'redis' has 1001 instances; the simulator serves at most 1000"))
		Expect(d.PutDeployment(big)).To(MatchError(sim.ErrInvalidManifest))
	})

	It("end as injected, keeping the deployment as it was", func() {
		c.waitTask(c.deploy(redisManifest("r1", "1")))
		d.FailNextTask("r1")
		t := c.waitTask(c.deploy(redisManifest("r1", "2")))
		Expect(t["state"]).To(Equal("error"))
		Expect(t["result"]).To(MatchRegexp(`^'redis/[0-9a-f-]{36} \(0\)' is not running after update`))
		Expect(c.getJSON("/deployments/r1")).To(Equal(map[string]any{"manifest": redisManifest("r1", "1")}))
		events := c.getJSON("/events?deployment=r1&object_type=deployment").([]any)
		Expect(events[0]).To(HaveKeyWithValue("error", t["result"]))

		Expect(d.EndNextTask("", sim.StateTimeout)).To(Succeed())
		Expect(c.waitTask(c.deleteDeployment("r1"))["state"]).To(Equal("timeout"))
		Expect(d.EndNextTask("", sim.StateCancelled)).To(Succeed())
		Expect(c.waitTask(c.deleteDeployment("r1"))["state"]).To(Equal("cancelled"))
		Expect(d.EndNextTask("", sim.StateDone)).To(MatchError(sim.ErrBadState))
		Expect(c.waitTask(c.deleteDeployment("r1"))["state"]).To(Equal("done"))
	})

	Describe("cancelling with DELETE /task/:id", func() {
		It("cancels a queued task at once and a processing one at its next checkpoint", func() {
			d.Knobs().SetTaskDuration(time.Hour)
			running, queued := c.deploy(redisManifest("r1", "1")), c.deploy(redisManifest("r2", "1"))
			Eventually(func() string { return c.taskState(running) }).Should(Equal("processing"))
			Expect(c.do(http.MethodDelete, "/task/"+itoa(queued), nil).status).To(Equal(http.StatusNoContent))
			Expect(c.waitTask(queued)["state"]).To(Equal("cancelled"))
			Expect(c.do(http.MethodDelete, "/task/"+itoa(running), nil).status).To(Equal(http.StatusNoContent))
			t := c.waitTask(running)
			Expect(t["state"]).To(Equal("cancelled"))
			Expect(t["result"]).To(Equal("Task " + itoa(running) + " cancelled"))
			Expect(c.getJSON("/locks")).To(BeEmpty())
		})

		It("answers 400 for a finished task and 404 for an unknown one", func() {
			id := c.deploy(redisManifest("r1", "1"))
			c.waitTask(id)
			r := c.do(http.MethodDelete, "/task/"+itoa(id), nil)
			Expect(r.status).To(Equal(http.StatusBadRequest))
			Expect(r.json()).To(HaveKeyWithValue("code", 10001.0))
			r = c.do(http.MethodDelete, "/task/424242", nil)
			Expect(r.status).To(Equal(http.StatusNotFound))
			Expect(r.json()).To(HaveKeyWithValue("code", 10000.0))
			Expect(d.CancelTask(424242)).To(MatchError(sim.ErrTaskNotFound))
		})
	})

	It("list tasks newest first, filtered by state, deployment, context id and limit", func() {
		c.header = http.Header{"X-Bosh-Context-Id": {"run-1"}}
		a := c.deploy(redisManifest("r1", "1"))
		c.header = nil
		c.waitTask(a)
		b := c.deploy(redisManifest("r2", "1"))
		c.waitTask(b)
		full := taskIDOf(c.get("/deployments/r1/vms?format=full"))
		c.waitTask(full)

		ids := func(path string) []int {
			var out []int
			for _, t := range c.getJSON(path).([]any) {
				out = append(out, int(t.(map[string]any)["id"].(float64)))
			}
			return out
		}
		Expect(ids("/tasks")).To(Equal([]int{b, a}), "verbose=1 hides vm-state tasks")
		Expect(ids("/tasks?verbose=2")).To(Equal([]int{full, b, a}))
		Expect(ids("/tasks?verbose=2&limit=1")).To(Equal([]int{full}))
		Expect(ids("/tasks?context_id=run-1")).To(Equal([]int{a}))
		Expect(ids("/tasks?deployment=r2")).To(Equal([]int{b}))
		Expect(ids("/tasks?state=queued,processing")).To(BeEmpty())
		Expect(ids("/tasks?state=done")).To(Equal([]int{b, a}))
	})

	It("serve output as text/plain with Range support, and 204 without output", func() {
		id := c.deploy(redisManifest("r1", "1"))
		c.waitTask(id)
		whole := c.get("/tasks/" + itoa(id) + "/output?type=event")
		Expect(whole.status).To(Equal(http.StatusOK))
		Expect(whole.header.Get("Content-Type")).To(HavePrefix("text/plain"))

		c.header = http.Header{"Range": {"bytes=0-9"}}
		part := c.get("/tasks/" + itoa(id) + "/output?type=event")
		Expect(part.status).To(Equal(http.StatusPartialContent))
		Expect(part.body).To(Equal(whole.body[:10]))
		c.header = http.Header{"Range": {"bytes=1000000-"}}
		Expect(c.get("/tasks/" + itoa(id) + "/output?type=event").status).To(Equal(http.StatusRequestedRangeNotSatisfiable))
		c.header = nil

		Expect(c.get("/tasks/" + itoa(id) + "/output?type=result").status).To(Equal(http.StatusNoContent))
		Expect(string(c.get("/tasks/" + itoa(id) + "/output?type=debug").body)).To(ContainSubstring("DEBUG"))
	})

	It("waits for the lock of a deployment another task holds", func() {
		// The first task runs long enough that a slow machine still sees it
		// hold the lock when the locks are read (CI once read them after 300 ms).
		w := start(sim.Options{TaskDuration: 3 * time.Second, Workers: 2, LockTimeout: 10 * time.Second})
		wc := newClient(w)
		first := wc.deploy(redisManifest("r1", "1"))
		second := wc.deploy(redisManifest("r1", "2"))
		Eventually(func() string { return wc.taskState(first) }).Should(Equal("processing"))
		Eventually(func() string { return wc.taskState(second) }).Should(Equal("processing"), "it runs, waiting for the lock")
		Expect(wc.getJSON("/locks")).To(ConsistOf(HaveKeyWithValue("task_id", itoa(first))))
		Expect(wc.waitTask(second)["state"]).To(Equal("done"))
		Expect(wc.task(first)["state"]).To(Equal("done"))
		Expect(wc.getJSON("/deployments/r1")).To(Equal(map[string]any{"manifest": redisManifest("r1", "2")}))
	})
})

package sim_test

import (
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

// twoRedis is redisManifest with two redis instances.
func twoRedis(name string) string {
	return strings.Replace(redisManifest(name, "16.1.0"), "instances: 1\n  azs: [z1]\n  jobs:\n  - name: redis\n",
		"instances: 2\n  azs: [z1]\n  jobs:\n  - name: redis\n", 1)
}

var _ = Describe("instance states (bosh start, stop, restart, recreate)", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: 10 * time.Millisecond, AgentTimeout: 50 * time.Millisecond})
		c = newClient(d)
		Expect(d.PutDeployment(twoRedis("r1"))).To(Succeed())
	})

	// put sends what the bosh CLI sends: PUT with an empty text/yaml body.
	put := func(path string) reply {
		c.contentType = "text/yaml"
		defer func() { c.contentType = "" }()
		return c.do(http.MethodPut, path, []byte{})
	}
	full := func(kind string) []map[string]any {
		r := c.get("/deployments/r1/" + kind + "?format=full")
		Expect(r.status).To(Equal(http.StatusFound))
		id := taskIDOf(r)
		Expect(c.waitTask(id)["description"]).To(Equal("retrieve vm-stats"))
		var out []map[string]any
		for _, l := range ndjson(c.get("/tasks/" + itoa(id) + "/output?type=result").body) {
			out = append(out, ev(l))
		}
		return out
	}
	byIndex := func(lines []map[string]any, group string, index int) map[string]any {
		for _, l := range lines {
			if l["job_name"] == group && l["index"] == float64(index) {
				return l
			}
		}
		Fail("no instance " + group + "/" + itoa(index))
		return nil
	}

	It("stops one instance through a 'create deployment' task that updates it alone, then starts it", func() {
		id := taskIDOf(put("/deployments/r1/jobs/redis/1?state=stopped"))
		t := c.waitTask(id)
		Expect(t).To(And(HaveKeyWithValue("state", "done"), HaveKeyWithValue("description", "create deployment"),
			HaveKeyWithValue("result", "/deployments/r1")))
		var updated []string
		for _, l := range ndjson(c.get("/tasks/" + itoa(id) + "/output?type=event").body) {
			if ev(l)["stage"] == "Updating instance" && ev(l)["state"] == "started" {
				updated = append(updated, ev(l)["task"].(string))
				Expect(ev(l)).To(HaveKeyWithValue("tags", []any{"redis"}))
			}
		}
		Expect(updated).To(ConsistOf(MatchRegexp(`^redis/` + uuidRE.String() + ` \(1\) \(canary\)$`)))

		lines := full("instances")
		Expect(byIndex(lines, "redis", 1)).To(And(HaveKeyWithValue("state", "stopped"), HaveKeyWithValue("job_state", "stopped")))
		Expect(byIndex(lines, "redis", 0)).To(And(HaveKeyWithValue("state", "started"), HaveKeyWithValue("job_state", "running")))

		var events []any
		for _, e := range c.getJSON("/events?task=" + itoa(id)).([]any) {
			if ev(e)["object_type"] != "lock" {
				events = append(events, e)
			}
		}
		name := "redis/" + byIndex(lines, "redis", 1)["id"].(string)
		Expect(actionsOf(events)).To(Equal([]string{"update r1 <-", "stop " + name + " <-", "stop " + name, "update r1"}))
		Expect(ev(events[1])).To(And(HaveKeyWithValue("instance", name), HaveKeyWithValue("deployment", "r1"),
			HaveKeyWithValue("object_type", "instance"), HaveKeyWithValue("context", map[string]any{})))

		started := c.waitTask(taskIDOf(put("/deployments/r1/jobs/redis/" + byIndex(lines, "redis", 1)["id"].(string) + "?state=started")))
		Expect(started["state"]).To(Equal("done"))
		Expect(byIndex(full("instances"), "redis", 1)).To(HaveKeyWithValue("state", "started"))
		Expect(actionsOf(c.getJSON("/events?object_type=instance&task=" + itoa(int(started["id"].(float64)))))).
			To(Equal([]string{"start " + name + " <-", "start " + name}))
	})

	It("recreates every instance of the deployment with new VMs and records the VMs' deletion and creation", func() {
		before := c.getJSON("/deployments/r1/vms").([]any)
		id := taskIDOf(put("/deployments/r1/jobs/*?state=recreate"))
		Expect(c.waitTask(id)["state"]).To(Equal("done"))
		after := c.getJSON("/deployments/r1/vms").([]any)
		Expect(after).To(HaveLen(2))
		for i := range after {
			Expect(ev(after[i])["id"]).To(Equal(ev(before[i])["id"]), "the same instance")
			Expect(ev(after[i])["cid"]).NotTo(Equal(ev(before[i])["cid"]), "on a new VM")
		}
		vmEvents := c.getJSON("/events?object_type=vm&task=" + itoa(id)).([]any)
		old, fresh := ev(before[0])["cid"].(string), ev(after[0])["cid"].(string)
		Expect(actionsOf(vmEvents)).To(ContainElements("delete "+old+" <-", "delete "+old, "create "+fresh+" <-", "create "))
		recreate := c.getJSON("/events?object_type=instance&action=recreate&task=" + itoa(id)).([]any)
		Expect(recreate).To(HaveLen(4), "a start and an end per instance")
		Expect(ev(recreate[3])["context"]).To(Equal(map[string]any{"az": "z1"}))
	})

	It("stops a group hard (detached): its VMs are deleted, /instances keeps the instances without VM", func() {
		Expect(c.waitTask(taskIDOf(put("/deployments/r1/jobs/redis?state=detached")))["state"]).To(Equal("done"))
		Expect(c.getJSON("/deployments/r1/vms")).To(BeEmpty())
		lines := full("instances")
		Expect(lines).To(HaveLen(3), "two redis and the errand")
		Expect(byIndex(lines, "redis", 0)).To(And(HaveKeyWithValue("state", "detached"), HaveKeyWithValue("vm_cid", BeNil()),
			HaveKeyWithValue("job_state", BeNil()), HaveKeyWithValue("ips", BeEmpty())))
		plain := c.getJSON("/deployments/r1/instances").([]any)
		Expect(ev(plain[0])).To(HaveKeyWithValue("expects_vm", false))
	})

	It("changes nothing for a group that does not exist, as the Director does not check it", func() {
		id := taskIDOf(put("/deployments/r1/jobs/nosuch?state=stopped"))
		Expect(c.waitTask(id)["state"]).To(Equal("done"))
		Expect(c.getJSON("/events?object_type=instance")).To(BeEmpty())
	})

	It("refuses unknown instances, malformed ids, missing deployments and invalid states as the Director does", func() {
		r := put("/deployments/r1/jobs/redis/7?state=stopped")
		Expect(r.status).To(Equal(http.StatusNotFound))
		Expect(r.json()).To(Equal(map[string]any{"code": 70001.0, "description": "'r1/redis/7' doesn't exist"}))
		r = put("/deployments/r1/jobs/redis/abc?state=stopped")
		Expect(r.status).To(Equal(http.StatusBadRequest))
		Expect(r.json()).To(Equal(map[string]any{"code": 70002.0, "description": "Invalid instance index or id 'abc'"}))
		r = put("/deployments/nope/jobs/redis?state=stopped")
		Expect(r.status).To(Equal(http.StatusNotFound))
		Expect(r.json()).To(HaveKeyWithValue("code", 70000.0))
		r = put("/deployments/r1/jobs/redis")
		Expect(r.json()).To(Equal(map[string]any{"code": 440001.0, "description": "Manifest should not be empty"}))
		Expect(c.do(http.MethodPut, "/deployments/r1/jobs/redis?state=stopped", nil).status).To(Equal(http.StatusNotFound),
			"only text/yaml, as the Director's route consumes")

		t := c.waitTask(taskIDOf(put("/deployments/r1/jobs/redis?state=sleeping")))
		Expect(t["state"]).To(Equal("error"))
		Expect(t["result"]).To(Equal("Invalid state 'sleeping' for 'redis', valid states are: started, stopped, detached, recreate, restart"))
	})

	It("shows an unresponsive agent as the Director does, and a recreate brings it back", func() {
		lines := full("vms")
		victim := byIndex(lines, "redis", 0)["id"].(string)
		Expect(d.SetAgent("r1", victim, sim.AgentUnresponsive)).To(Succeed())
		began := time.Now()
		got := byIndex(full("vms"), "redis", 0)
		Expect(time.Since(began)).To(BeNumerically(">=", 150*time.Millisecond),
			"the task waits three tries of the agent's timeout (vm_state.rb TIMEOUT, GET_STATE_MAX_RETRIES)")
		Expect(got).To(And(HaveKeyWithValue("job_state", "unresponsive agent"), HaveKeyWithValue("vitals", BeNil()),
			HaveKeyWithValue("processes", BeEmpty()), HaveKeyWithValue("state", "started")))
		alerts := c.getJSON("/events?object_type=alert").([]any)
		Expect(alerts).To(HaveLen(1))
		Expect(ev(alerts[0])).To(And(HaveKeyWithValue("user", "hm"), HaveKeyWithValue("action", "create"),
			HaveKeyWithValue("deployment", "r1"), HaveKeyWithValue("instance", "redis/"+victim)))
		Expect(ev(alerts[0])["context"]).To(HaveKeyWithValue("message", ContainSubstring("has timed out")))

		Expect(c.waitTask(taskIDOf(put("/deployments/r1/jobs/redis/0?state=recreate")))["state"]).To(Equal("done"))
		Expect(byIndex(full("vms"), "redis", 0)).To(HaveKeyWithValue("job_state", "running"))
	})

	It("stops a dry run of a change after preparing, changing nothing", func() {
		id := taskIDOf(put("/deployments/r1/jobs/*?state=stopped&dry_run=true"))
		t := c.waitTask(id)
		Expect(t).To(And(HaveKeyWithValue("state", "done"), HaveKeyWithValue("description", "create deployment (dry run)")))
		for _, l := range ndjson(c.get("/tasks/" + itoa(id) + "/output?type=event").body) {
			Expect(ev(l)["stage"]).To(Equal("Preparing deployment"))
		}
		Expect(byIndex(full("instances"), "redis", 0)).To(HaveKeyWithValue("state", "started"))
	})

	It("resurrects an instance as the Health Monitor does: a 'scan and fix' task by hm with VM events only", func() {
		victim := d.InstanceIDs("r1", "redis")[1]
		Expect(d.SetAgent("r1", victim, sim.AgentUnresponsive)).To(Succeed())
		before := byIndex(full("vms"), "redis", 1)["vm_cid"]
		Expect(d.Resurrect("r1", victim)).To(Succeed())
		after := byIndex(full("vms"), "redis", 1)
		Expect(after["vm_cid"]).NotTo(Equal(before))
		Expect(after["job_state"]).To(Equal("running"))
		var fix map[string]any
		for _, t := range c.getJSON("/tasks?verbose=2").([]any) {
			if ev(t)["description"] == "scan and fix" {
				fix = ev(t)
			}
		}
		Expect(fix).To(And(HaveKeyWithValue("user", "hm"), HaveKeyWithValue("state", "done"), HaveKeyWithValue("result", "scan and fix complete")))
		events := c.getJSON("/events?user=hm&object_type=vm").([]any)
		Expect(events).To(HaveLen(4), "a delete pair and a create pair")
		for _, e := range events {
			Expect(ev(e)).To(And(HaveKeyWithValue("deployment", "r1"), HaveKeyWithValue("instance", "redis/"+victim)))
		}
		Expect(c.getJSON("/events?user=hm&object_type=instance")).To(BeEmpty())
		Expect(d.Resurrect("r1", "not-an-instance")).To(MatchError(sim.ErrNoInstance))
	})

	It("survives a manifest changed out of band while a recreate runs, and a resurrection while it closes", func() {
		d.Knobs().SetTaskDuration(300 * time.Millisecond)
		id := taskIDOf(put("/deployments/r1/jobs/*?state=recreate"))
		Eventually(func() string { return c.taskState(id) }).Should(Equal("processing"))
		Expect(d.PutDeployment(strings.ReplaceAll(twoRedis("r1"), "name: redis\n  instances", "name: other\n  instances"))).To(Succeed())
		Expect(c.waitTask(id)["state"]).To(Equal("done"), "the instances it changed went with the old manifest")

		closing := start(sim.Options{Workers: 1, TaskDuration: time.Hour})
		Expect(closing.PutDeployment(twoRedis("r2"))).To(Succeed())
		cc := newClient(closing)
		cc.contentType = "text/yaml"
		cc.do(http.MethodPut, "/deployments/r2/jobs/*?state=restart", []byte{}) // holds the only worker
		errs := make(chan error, 1)
		go func() { errs <- closing.Resurrect("r2", closing.InstanceIDs("r2", "redis")[0]) }()
		Eventually(func() []any { return cc.getJSON("/tasks?state=queued").([]any) }).Should(HaveLen(1), "the scan and fix waits for the worker")
		Expect(closing.Close()).To(Succeed())
		Eventually(errs).Should(Receive(MatchError(sim.ErrClosed)))
	})

	It("fails a scan and fix at once while a deployment holds the lock, as the Director's timeout of 0", func() {
		d.Knobs().SetTaskDuration(time.Hour)
		c.waitLocked(taskIDOf(put("/deployments/r1/jobs/*?state=restart")))
		err := d.Resurrect("r1", d.InstanceIDs("r1", "redis")[0])
		Expect(err).To(MatchError(ContainSubstring("Unable to get deployment lock, maybe a deployment is in progress. Try again later.")))
	})
})

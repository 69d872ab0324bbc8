package sim_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

// ev is an event of GET /events.
func ev(v any) map[string]any { return v.(map[string]any) }

// actionsOf writes each event as "action object_name", with " <-" when it
// names a parent (an end event) and " !" when it carries an error.
func actionsOf(events any) []string {
	out := []string{}
	for _, e := range events.([]any) {
		name, _ := ev(e)["object_name"].(string) // a VM's creation starts without one
		s := ev(e)["action"].(string) + " " + name
		if _, ok := ev(e)["parent_id"]; ok {
			s += " <-"
		}
		if _, ok := ev(e)["error"]; ok {
			s += " !"
		}
		out = append(out, s)
	}
	return out
}

// idOf is an event's id as a number.
func idOf(e any) int {
	id, err := strconv.Atoi(ev(e)["id"].(string))
	Expect(err).NotTo(HaveOccurred())
	return id
}

var _ = Describe("GET /events", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: -1})
		c = newClient(d)
	})

	It("records a deploy and a delete as the Director does: start, lock, end naming its start, error when failed", func() {
		create := c.deploy(redisManifest("r1", "16.0.0"))
		c.waitTask(create)
		d.FailNextTask("r1")
		update := c.deploy(redisManifest("r1", "16.1.0"))
		failed := c.waitTask(update)
		c.waitTask(c.deleteDeployment("r1"))

		var events []any // the deployment's and its lock's (the instances' and VMs': jobstates_test, deploys_test)
		for _, e := range c.getJSON("/events").([]any) {
			if ev(e)["object_type"] == "deployment" || ev(e)["object_type"] == "lock" {
				events = append(events, e)
			}
		}
		Expect(actionsOf(events)).To(Equal([]string{
			"release lock:deployment:r1", "delete r1 <-", "acquire lock:deployment:r1", "delete r1",
			"update r1 <- !", "release lock:deployment:r1", "acquire lock:deployment:r1", "update r1",
			"release lock:deployment:r1", "create r1 <-", "acquire lock:deployment:r1", "create r1"}),
			"a success ends inside its lock, a failure after it")
		for i, e := range events {
			if i > 0 {
				Expect(idOf(e)).To(BeNumerically("<", idOf(events[i-1])), "newest first")
			}
			Expect(ev(e)).To(HaveKeyWithValue("user", "admin"))
			Expect(ev(e)).To(HaveKeyWithValue("deployment", "r1"))
			Expect(ev(e)).NotTo(HaveKey("instance"), "empty fields are left out")
		}
		Expect(ev(events[1])).To(HaveKeyWithValue("parent_id", ev(events[3])["id"]))
		Expect(ev(events[4])).To(HaveKeyWithValue("parent_id", ev(events[7])["id"]))
		Expect(ev(events[4])).To(HaveKeyWithValue("error", failed["result"]))
		Expect(ev(events[4])).To(HaveKeyWithValue("task", itoa(update)))
		Expect(ev(events[9])).To(HaveKeyWithValue("task", itoa(create)))
		Expect(ev(events[9])).To(HaveKeyWithValue("context", map[string]any{"before": map[string]any{},
			"after": map[string]any{"releases": []any{"redis/16.0.0"}, "stemcells": []any{"bosh-vsphere-esxi-ubuntu-jammy-go_agent/1.506"}}}))
		Expect(ev(events[4])["context"]).To(HaveKeyWithValue("before", HaveKeyWithValue("releases", []any{"redis/16.0.0"})))
		Expect(ev(events[4])["context"]).To(HaveKeyWithValue("after", HaveKeyWithValue("releases", []any{"redis/16.1.0"})))
		Expect(ev(events[11])).To(HaveKeyWithValue("context", map[string]any{}))
		Expect(d.Stats().Requests).To(HaveKeyWithValue("GET /events", 1))
	})

	It("records a dry run's start only, and a task that cannot get its lock without acquiring it", func() {
		c.waitTask(taskIDOf(c.do(http.MethodPost, "/deployments?dry_run=true", []byte(redisManifest("r1", "1")))))
		Expect(actionsOf(c.getJSON("/events?object_type=deployment"))).To(Equal([]string{"create r1"}),
			"the Director returns before it records a dry run's end")

		d = start(sim.Options{TaskDuration: time.Hour, LockTimeout: 50 * time.Millisecond})
		c = newClient(d)
		holder := c.deploy(redisManifest("r1", "1"))
		c.waitLocked(holder)
		blocked := c.waitTask(c.deploy(redisManifest("r1", "2")))
		Expect(blocked["state"]).To(Equal("error"))
		events := c.getJSON("/events?task=" + itoa(int(blocked["id"].(float64)))).([]any)
		Expect(actionsOf(events)).To(Equal([]string{"update r1 <- !", "update r1"}))
		Expect(ev(events[0])).To(HaveKeyWithValue("error", And(HavePrefix(strings.TrimSuffix(blocked["result"].(string), "...")),
			HaveSuffix("description: 'create deployment'"))))
		Expect(ev(events[0])).To(HaveKeyWithValue("context", map[string]any{}), "never planned")
	})

	It("records the changes made without a task, by the admin user and without task", func() {
		Expect(d.PutDeployment(redisManifest("r1", "1"))).To(Succeed())
		Expect(d.PutDeployment(redisManifest("r1", "2"))).To(Succeed())
		d.RemoveDeployment("r1")
		d.RemoveDeployment("never-there")
		names := d.SeedDeployments(2, nil)
		events := c.getJSON("/events").([]any)
		Expect(actionsOf(events)).To(Equal([]string{"create " + names[1], "create " + names[0],
			"delete r1 <-", "delete r1", "update r1 <-", "update r1", "create r1 <-", "create r1"}))
		for _, e := range events {
			Expect(ev(e)).To(HaveKeyWithValue("user", sim.AdminUser))
			Expect(ev(e)).To(HaveKeyWithValue("object_type", "deployment"))
			Expect(ev(e)).NotTo(HaveKey("task"))
		}
		Expect(ev(events[4])["context"]).To(Equal(map[string]any{
			"before": map[string]any{"releases": []any{"redis/1"}, "stemcells": []any{"bosh-vsphere-esxi-ubuntu-jammy-go_agent/1.506"}},
			"after":  map[string]any{"releases": []any{"redis/2"}, "stemcells": []any{"bosh-vsphere-esxi-ubuntu-jammy-go_agent/1.506"}}}))
	})

	It("pages back with before_id over more than 200 events, each exactly once, newest first", func() {
		d.SeedDeployments(450, nil)
		Expect(d.PutDeployment(redisManifest("r1", "1"))).To(Succeed())
		var ids, sizes []int
		path := "/events"
		for {
			page := c.getJSON(path).([]any)
			sizes = append(sizes, len(page))
			if len(page) == 0 {
				break
			}
			for _, e := range page {
				ids = append(ids, idOf(e))
			}
			path = "/events?before_id=" + ev(page[len(page)-1])["id"].(string)
		}
		Expect(sizes).To(Equal([]int{200, 200, 52, 0}))
		Expect(ids).To(HaveLen(452))
		for i, id := range ids {
			Expect(id).To(Equal(452-i), "every event once, newest first")
		}
	})

	DescribeTable("filters as the Director does, an empty or unknown value selecting nothing",
		func(query string, want []string) {
			c.waitTask(c.deploy(redisManifest("r1", "1")))
			Expect(d.PutDeployment(redisManifest("r2", "1"))).To(Succeed())
			Expect(actionsOf(c.getJSON("/events?" + query))).To(Equal(want))
		},
		Entry("deployment", "deployment=r2", []string{"create r2 <-", "create r2"}),
		Entry("object type", "object_type=lock", []string{"release lock:deployment:r1", "acquire lock:deployment:r1"}),
		Entry("object name", "object_name=lock:deployment:r1&action=acquire", []string{"acquire lock:deployment:r1"}),
		Entry("action", "action=create&deployment=r1&object_type=deployment", []string{"create r1 <-", "create r1"}),
		Entry("task", "task=1&object_type=deployment", []string{"create r1 <-", "create r1"}),
		Entry("task as the Director stores it, not as a number", "task=01", []string{}),
		Entry("user", "user=nobody", []string{}),
		Entry("instance: an index is not an instance's name (group/uuid)", "instance=redis/0", []string{}),
		Entry("an empty value", "deployment=", []string{}),
		Entry("the last of a repeated parameter", "deployment=r1&deployment=r2", []string{"create r2 <-", "create r2"}),
		Entry("before_id", "before_id=3", []string{"acquire lock:deployment:r1", "create r1"}),
		Entry("before_id read as Ruby's to_i reads it", "before_id=%203x", []string{"acquire lock:deployment:r1", "create r1"}),
		Entry("before_id with underscores", "before_id=0_3", []string{"acquire lock:deployment:r1", "create r1"}),
		Entry("before_id that is no number: 0", "before_id=x", []string{}),
		Entry("before_id beyond any id", "before_id=99999999999999999999999&deployment=r2", []string{"create r2 <-", "create r2"}),
	)

	It("filters by before_time and after_time, in unix seconds or as times, after_time from the next second on", func() {
		Expect(d.PutDeployment(redisManifest("r1", "1"))).To(Succeed())
		first := int64(ev(c.getJSON("/events").([]any)[0])["timestamp"].(float64))
		Eventually(func() int64 { return time.Now().Unix() }).WithTimeout(3 * time.Second).Should(BeNumerically(">", first))
		Expect(d.PutDeployment(redisManifest("r2", "1"))).To(Succeed())
		second := int64(ev(c.getJSON("/events").([]any)[0])["timestamp"].(float64))
		Expect(second).To(BeNumerically(">", first))

		at := func(unix int64) []string {
			t := time.Unix(unix, 0).UTC()
			return []string{strconv.FormatInt(unix, 10), t.Format(time.RFC3339), t.Format("2006-01-02 15:04:05 UTC"),
				t.In(time.FixedZone("", 2*3600)).Format("2006-01-02 15:04:05 -0700")}
		}
		for _, v := range at(first) {
			Expect(actionsOf(c.getJSON("/events?after_time="+url.QueryEscape(v)))).To(Equal([]string{"create r2 <-", "create r2"}), v)
			Expect(actionsOf(c.getJSON("/events?before_time="+url.QueryEscape(v)))).To(BeEmpty(), v)
		}
		for _, v := range at(second) {
			Expect(actionsOf(c.getJSON("/events?before_time="+url.QueryEscape(v)))).To(Equal([]string{"create r1 <-", "create r1"}), v)
		}
		Expect(c.getJSON("/events?after_time=" + strconv.FormatInt(first-1, 10))).To(HaveLen(4))

		r := c.get("/events?before_time=yesterday&after_time=tomorrow")
		Expect(r.status).To(Equal(http.StatusBadRequest))
		Expect(string(r.body)).To(Equal("Invalid before parameter: 'yesterday' "))
		Expect(string(c.get("/events?after_time=").body)).To(Equal("Invalid after parameter: '' "))
	})

	It("keeps the newest events_kept: older ids are no longer reachable", func() {
		d.SeedDeployments(30, nil)
		admin := c.anonymous()
		admin.contentType = "application/json"
		Expect(admin.do(http.MethodPost, "/_sim/config", []byte(`{"events_kept": 10}`)).status).To(Equal(http.StatusOK))
		events := c.getJSON("/events").([]any)
		Expect(events).To(HaveLen(10))
		Expect(idOf(events[9])).To(Equal(21))
		Expect(c.getJSON("/events?before_id=21")).To(BeEmpty(), "pruned")

		d.SeedDeployments(5, nil)
		Expect(idOf(c.getJSON("/events").([]any)[9])).To(Equal(26), "dropped as new ones come")
		Expect(d.PutDeployment(redisManifest("r1", "1"))).To(Succeed())
		d.Knobs().SetEventsKept(1)
		Expect(actionsOf(c.getJSON("/events"))).To(Equal([]string{"create r1 <-", "create r1"}),
			"the start of a kept end event is kept, as the Director's cleanup keeps it")
		d.Knobs().SetEventsKept(0)
		Expect(d.Knobs().EventsKept()).To(Equal(1), "less than one is ignored")
	})

	It("refuses to start keeping no events", func() {
		_, err := sim.New(sim.Options{EventsKept: -1})
		Expect(err).To(MatchError(sim.ErrBadOptions))
		Expect(err).To(MatchError(ContainSubstring("events kept -1 is less than 1")))
	})
})

var _ = Describe("a Director that records no events (director.events.record_events false, its default)", func() {
	It("answers GET /events with an empty list whatever happens, and records again once turned on", func() {
		d := start(sim.Options{TaskDuration: -1, NoEvents: true})
		c := newClient(d)
		c.waitTask(c.deploy(redisManifest("r1", "16.0.0")))
		c.waitTask(c.deploy(redisManifest("r1", "16.1.0")))
		Expect(c.getJSON("/events")).To(BeEmpty())
		Expect(c.getJSON("/tasks?deployment=r1")).To(HaveLen(2), "tasks are recorded whatever events do")

		admin := c.anonymous()
		admin.contentType = "application/json"
		Expect(admin.do(http.MethodPost, "/_sim/config", []byte(`{"record_events": true}`)).status).To(Equal(http.StatusOK))
		Expect(admin.getJSON("/_sim/config")).To(HaveKeyWithValue("record_events", true))
		c.waitTask(c.deleteDeployment("r1"))
		Expect(actionsOf(c.getJSON("/events"))).To(ContainElement("delete r1"))
	})
})

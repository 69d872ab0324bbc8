package sim_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

const serviceInstance = "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b"

const cfManifest = `name: cf
releases:
- {name: capi, version: 1.181.0}
- {name: diego, version: 2.99.0}
stemcells:
- {alias: default, os: ubuntu-jammy, version: "1.506"}
`

// fixtureManifest is the manifest of deployment_manifest.json.
func fixtureManifest() string {
	return fixture("deployment_manifest.json").(map[string]any)["manifest"].(string)
}

// names lists the names of a deployments listing.
func names(listing []any) []string {
	var out []string
	for _, e := range listing {
		out = append(out, e.(map[string]any)["name"].(string))
	}
	return out
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

var _ = Describe("answers compared field by field with the fixtures", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: 20 * time.Millisecond, Workers: 2, LockTimeout: 300 * time.Millisecond})
		c = newClient(d)
	})

	It("GET /info like info_basic.json, with the version the reference names", func() {
		want := fixture("info_basic.json").(map[string]any)
		got := c.anonymous().getJSON("/info").(map[string]any)
		expectShape(got, want)
		Expect(got["version"]).To(Equal(fixture("info_uaa.json").(map[string]any)["version"]))
		Expect(got["user"]).To(BeNil(), "no credentials, no user")
		for _, k := range []string{"user_authentication", "features", "stemcell_os", "stemcell_version"} {
			Expect(got[k]).To(Equal(want[k]), k)
		}
		Expect(c.getJSON("/info").(map[string]any)["user"]).To(Equal("admin"))
	})

	It("GET /deployments like deployments.json and deployments_all_excluded.json", func() {
		Expect(d.PutDeployment(fixtureManifest())).To(Succeed())
		d.SetCloudConfig(sim.DefaultCloudConfig + "# changed\n") // the service instance's cloud config is now outdated
		Expect(d.PutDeployment(cfManifest)).To(Succeed())
		const failed = "redis-small-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"
		d.FailNextTask(failed) // a failed first deploy leaves a deployment without manifest
		Expect(c.waitTask(c.deploy(redisManifest(failed, "16.1.0")))["state"]).To(Equal("error"))
		d.Knobs().SetTaskDuration(time.Hour)
		c.deploy(fixtureManifest()) // runs: locked
		Eventually(func() []any { return c.getJSON("/locks").([]any) }).Should(HaveLen(1))

		want := fixture("deployments.json").([]any)
		got := c.getJSON("/deployments").([]any)
		Expect(got).To(HaveLen(3))
		Expect(names(got)).To(Equal([]string{"cf", failed, serviceInstance}), "sorted by name")
		Expect(got[0]).To(Equal(want[0]))
		Expect(got[2]).To(Equal(want[1]))
		expectShape(got[1], want[2])
		Expect(without(got[1], "teams")).To(Equal(without(want[2], "teams")), "a deployment whose first deploy failed")

		excluded := c.getJSON("/deployments?exclude_configs=true&exclude_releases=true&exclude_stemcells=true&exclude_lock=true").([]any)
		Expect([]any{excluded[0], excluded[2]}).To(Equal(fixture("deployments_all_excluded.json")))
		expectShape(excluded[1], fixture("deployments_all_excluded.json").([]any)[0])
	})

	It("GET /deployments/:name like deployment_manifest.json", func() {
		c.waitTask(c.deploy(fixtureManifest()))
		Expect(c.getJSON("/deployments/" + serviceInstance)).To(Equal(fixture("deployment_manifest.json")))
	})

	It("GET /deployments/:name/vms and /instances like deployment_vms.json and deployment_instances.json", func() {
		Expect(d.PutDeployment(redisManifest(serviceInstance, "16.1.0"))).To(Succeed())
		vms := c.getJSON("/deployments/" + serviceInstance + "/vms").([]any)
		Expect(vms).To(HaveLen(1))
		wantVM := fixture("deployment_vms.json").([]any)[0]
		expectShape(vms[0], wantVM)
		for _, k := range []string{"job", "index", "az", "active", "permanent_nats_credentials"} {
			Expect(vms[0].(map[string]any)[k]).To(Equal(wantVM.(map[string]any)[k]), k)
		}

		want := fixture("deployment_instances.json").([]any)
		got := c.getJSON("/deployments/" + serviceInstance + "/instances").([]any)
		Expect(got).To(HaveLen(2))
		expectShape(got[0], want[0])
		expectShape(got[1], want[1])
		Expect(without(got[1], "id")).To(Equal(without(want[1], "id")), "an errand has no VM")
		Expect(got[0].(map[string]any)["id"]).To(Equal(vms[0].(map[string]any)["id"]))
	})

	It("answers errors like the error fixtures", func() {
		Expect(c.get("/deployments/service-instance_does-not-exist").json()).To(Equal(fixture("error_deployment_not_found_404.json")))
		Expect(c.get("/deployments/service-instance_does-not-exist").status).To(Equal(http.StatusNotFound))
		Expect(c.get("/tasks/999999").json()).To(Equal(fixture("error_task_not_found_404.json")))
		Expect(c.get("/tasks/999999").status).To(Equal(http.StatusNotFound))
		r := c.do(http.MethodPost, "/deployments", []byte("releases: []\n"))
		Expect(r.status).To(Equal(http.StatusBadRequest))
		Expect(r.json()).To(Equal(fixture("error_missing_name_400.json")))
	})

	It("answers a token without a Director scope like error_unauthorized_scope_401.json", func() {
		u := start(sim.Options{Auth: sim.AuthUAA, ClientScopes: []string{"openid"}})
		uc := newClient(u).anonymous()
		uc.bearer = token(uc, "blacksmith", "secret")["access_token"].(string)
		r := uc.get("/deployments")
		Expect(r.status).To(Equal(http.StatusUnauthorized))
		uuid := uc.getJSON("/info").(map[string]any)["uuid"].(string)
		Expect(strings.ReplaceAll(string(r.body), uuid, "<director-uuid>")).To(MatchJSON(fixtureBytes("error_unauthorized_scope_401.json")))
	})

	It("GET /locks like locks.json while a task runs", func() {
		d.Knobs().SetTaskDuration(time.Hour)
		id := c.deploy(fixtureManifest())
		var locks []any
		Eventually(func() []any { locks = c.getJSON("/locks").([]any); return locks }).Should(HaveLen(1))
		want := fixture("locks.json").([]any)[0].(map[string]any)
		expectShape(locks[0], want)
		l := locks[0].(map[string]any)
		Expect(l["type"]).To(Equal(want["type"]))
		Expect(l["resource"]).To(Equal(want["resource"]))
		Expect(l["task_id"]).To(Equal(strconv.Itoa(id)))
		Expect(l["timeout"]).To(MatchRegexp(`^\d{10}\.\d{6}$`))
	})

	It("GET /releases like releases.json and GET /stemcells like stemcells.json", func() {
		c.waitTask(c.deploy(redisManifest(serviceInstance, "16.0.0")))
		c.waitTask(c.deploy(redisManifest(serviceInstance, "16.1.0")))
		c.waitTask(c.deploy(cfManifest))

		releases := c.getJSON("/releases").([]any)
		wantRelease := fixture("releases.json").([]any)[0].(map[string]any)
		Expect(releases).To(HaveLen(3)) // capi, diego, redis
		redis := releases[2].(map[string]any)
		expectShape(redis, wantRelease)
		versions := redis["release_versions"].([]any)
		wantVersions := wantRelease["release_versions"].([]any)
		Expect(versions).To(HaveLen(2))
		for i := range versions {
			Expect(without(versions[i], "commit_hash")).To(Equal(without(wantVersions[i], "commit_hash")))
			Expect(versions[i].(map[string]any)["commit_hash"]).To(MatchRegexp(`^[0-9a-f]{8}$`))
		}

		stemcells := c.getJSON("/stemcells").([]any)
		want := fixture("stemcells.json").([]any)[0].(map[string]any)
		Expect(stemcells).To(HaveLen(1))
		expectShape(stemcells[0], want)
		Expect(without(stemcells[0], "cid", "id")).To(Equal(without(want, "cid", "id")))
		Expect(stemcells[0].(map[string]any)["cid"]).To(MatchRegexp(`^sc-` + uuidRE.String() + `$`))
	})

	It("GET /configs?latest=true&type=cloud&name=default like configs_latest_cloud.json", func() {
		got := c.getJSON("/configs?latest=true&type=cloud&name=default").([]any)
		want := fixture("configs_latest_cloud.json").([]any)
		Expect(got).To(HaveLen(1))
		expectShape(got[0], want[0])
		Expect(without(got[0], "id", "created_at")).To(Equal(without(want[0], "id", "created_at")))
		Expect(got[0].(map[string]any)["created_at"]).To(MatchRegexp(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$`))
	})

	It("GET /tasks/:id like task_queued.json, task_done.json and GET /tasks like tasks_list.json", func() {
		d.Knobs().SetTaskDuration(time.Hour)
		running := c.deploy(redisManifest("service-instance_aaa", "16.1.0"))
		c.deploy(redisManifest("service-instance_bbb", "16.1.0")) // second worker
		c.header = http.Header{"X-Bosh-Context-Id": {"reconciler-run-42"}}
		d.Knobs().SetTaskDuration(10 * time.Millisecond)
		queued := c.deploy(fixtureManifest())
		c.header = nil

		q := c.task(queued)
		expectShape(q, fixture("task_queued.json"))
		Expect(without(q, "id", "user", "context_id")).To(Equal(without(fixture("task_queued.json"), "id", "user", "context_id")))
		Expect(q["context_id"]).To(Equal("reconciler-run-42"))
		Expect(q["user"]).To(Equal("admin"))

		Expect(d.CancelTask(running)).To(Succeed())
		done := c.waitTask(queued)
		want := fixture("task_done.json").(map[string]any)
		expectShape(done, want)
		Expect(done["state"]).To(Equal("done"))
		Expect(done["description"]).To(Equal(want["description"]))
		Expect(done["result"]).To(Equal(want["result"]))
		Expect(done["deployment"]).To(Equal(want["deployment"]))
		Expect(done["context_id"]).To(Equal(want["context_id"]))
		Expect(done["timestamp"]).To(BeNumerically(">=", done["started_at"]))

		list := c.getJSON("/tasks?deployment=service-instance_bbb&state=processing").([]any)
		Expect(list).To(HaveLen(1))
		wantList := fixture("tasks_list.json").([]any)
		expectShape(list[0], wantList[0])
		expectShape(c.getJSON("/tasks?deployment=" + serviceInstance).([]any)[0], wantList[1])
	})

	It("ends a task that cannot get its lock like task_error.json and task_event_error_line.json", func() {
		d.Knobs().SetTaskDuration(time.Hour)
		holder := c.deploy(fixtureManifest())
		c.waitLocked(holder)
		d.Knobs().SetTaskDuration(10 * time.Millisecond)
		failed := c.waitTask(c.deleteDeployment(serviceInstance))

		want := fixture("task_error.json").(map[string]any)
		expectShape(failed, want)
		Expect(without(failed, "id", "timestamp", "started_at", "user", "result")).To(Equal(without(want, "id", "timestamp", "started_at", "user", "result")))
		Expect(failed["result"]).To(Equal(want["result"]), "cut at 128 characters as the Director's job runner cuts it")

		lines := ndjson(c.get("/tasks/" + itoa(int(failed["id"].(float64))) + "/output?type=event").body)
		last := lines[len(lines)-1].(map[string]any)
		expectShape(last, fixture("task_event_error_line.json"))
		Expect(last["error"]).To(HaveKeyWithValue("code", 100.0))
		Expect(last["error"]).To(HaveKeyWithValue("message", MatchRegexp(`^%s%s%s$`,
			regexp.QuoteMeta("Failed to acquire lock for lock:deployment:"+serviceInstance+" uid: "), uuidRE,
			regexp.QuoteMeta(". Locking task id is "+strconv.Itoa(holder)+", description: 'create deployment'"))), "the whole message")
	})

	It("records GET /events like events.json: a create, then a delete that cannot get its lock", func() {
		created := c.waitTask(c.deploy(fixtureManifest()))
		d.Knobs().SetTaskDuration(time.Hour)
		holder := c.deploy(fixtureManifest())
		c.waitLocked(holder)
		failed := c.waitTask(c.deleteDeployment(serviceInstance))

		var got []any // the VMs' events left out: the fixture has none
		for _, e := range c.getJSON("/events?deployment=" + serviceInstance).([]any) {
			if ev(e)["object_type"] != "vm" {
				got = append(got, e)
			}
		}
		want := fixture("events.json").([]any)
		anyID := func(s string) string { return uuidRE.ReplaceAllString(s, "ID") } // instance ids are the simulator's
		Expect(anyID(strings.Join(actionsOf(got), "\n"))).To(Equal(anyID(strings.Join(actionsOf(want), "\n"))))
		for i := range got {
			expectShape(got[i], want[i])
			for _, k := range []string{"user", "action", "object_type", "object_name", "deployment"} {
				Expect(anyID(ev(got[i])[k].(string))).To(Equal(anyID(strings.ReplaceAll(ev(want[i])[k].(string), "broker-client", "admin"))), "%d %s", i, k)
			}
		}
		Expect(ev(got[0])["parent_id"]).To(Equal(ev(got[1])["id"]))
		Expect(ev(got[5])["parent_id"]).To(Equal(ev(got[9])["id"]))
		Expect(ev(got[6])["parent_id"]).To(Equal(ev(got[7])["id"]), "the instance's end names its start")
		Expect(ev(got[0])["error"]).To(HavePrefix(strings.TrimSuffix(failed["result"].(string), "...")))
		Expect(ev(got[0])["error"]).To(HaveSuffix("description: 'create deployment'"), "the whole message, not the task's cut result")
		Expect(ev(got[5])["context"]).To(Equal(ev(want[5])["context"]))
		made := int(created["id"].(float64))
		for i, task := range []int{int(failed["id"].(float64)), int(failed["id"].(float64)), holder, holder,
			made, made, made, made, made, made} {
			Expect(ev(got[i])["task"]).To(Equal(itoa(task)), "%d", i)
		}
	})

	It("writes event output like task_4711_output_event.ndjson", func() {
		id := c.deploy(fixtureManifest())
		c.waitTask(id)
		got := ndjson(c.get("/tasks/" + itoa(id) + "/output?type=event").body)
		want := ndjson(fixtureBytes("task_4711_output_event.ndjson"))
		Expect(got).To(HaveLen(len(want)))
		for i := range got {
			expectShape(got[i], want[i])
			g, w := without(got[i], "time", "task"), without(want[i], "time", "task")
			Expect(g).To(Equal(w), "line %d", i)
			Expect(uuidRE.ReplaceAllString(got[i].(map[string]any)["task"].(string), "ID")).
				To(Equal(uuidRE.ReplaceAllString(want[i].(map[string]any)["task"].(string), "ID")))
		}
	})

	It("writes the result of GET /deployments/:name/vms?format=full like task_4720_output_result_vms_full.ndjson", func() {
		Expect(d.PutDeployment(redisManifest(serviceInstance, "16.1.0"))).To(Succeed())
		r := c.get("/deployments/" + serviceInstance + "/vms?format=full")
		Expect(r.status).To(Equal(http.StatusFound))
		task := c.waitTask(taskIDOf(r))
		Expect(task["state"]).To(Equal("done"))
		Expect(task["description"]).To(Equal("retrieve vm-stats"))
		lines := ndjson(c.get("/tasks/" + itoa(taskIDOf(r)) + "/output?type=result").body)
		want := ndjson(fixtureBytes("task_4720_output_result_vms_full.ndjson"))[0].(map[string]any)
		Expect(lines).To(HaveLen(1))
		expectShape(lines[0], want)
		got := lines[0].(map[string]any)
		for _, k := range []string{"active", "cloud_properties", "job_name", "index", "job_state", "state", "vm_type", "az", "bootstrap", "ignore", "stemcell"} {
			Expect(got[k]).To(Equal(want[k]), k)
		}
	})

	It("writes the result of GET /deployments/:name/instances?format=full like task_4730_output_result_instances_full.ndjson", func() {
		Expect(d.PutDeployment(redisManifest(serviceInstance, "16.1.0"))).To(Succeed())
		r := c.get("/deployments/" + serviceInstance + "/instances?format=full")
		Expect(r.status).To(Equal(http.StatusFound))
		task := c.waitTask(taskIDOf(r))
		Expect(task).To(And(HaveKeyWithValue("description", "retrieve vm-stats"), HaveKeyWithValue("result", "")))
		lines := ndjson(c.get("/tasks/" + itoa(taskIDOf(r)) + "/output?type=result").body)
		want := ndjson(fixtureBytes("task_4730_output_result_instances_full.ndjson"))
		Expect(lines).To(HaveLen(2), "the redis instance and the errand, which has no VM")
		for i := range lines {
			expectShape(lines[i], want[i])
		}
	})

	It("answers POST /deployments/:name/diff like deployment_diff_changed.json", func() {
		c.waitTask(c.deploy(redisManifest(serviceInstance, "16.1.0")))
		got := c.do(http.MethodPost, "/deployments/"+serviceInstance+"/diff", []byte(redisManifest(serviceInstance, "16.2.0"))).json()
		want := fixture("deployment_diff_changed.json").(map[string]any)
		expectShape(without(got, "diff"), without(want, "diff"))
		Expect(got.(map[string]any)["diff"]).To(ContainElement([]any{"    version: 16.2.0", "added"}))
		for _, l := range got.(map[string]any)["diff"].([]any) {
			Expect(l).To(HaveLen(2))
			if status := l.([]any)[1]; status != nil {
				Expect(status).To(BeElementOf("added", "removed"))
			}
		}
	})

	It("records an instance's stop like events_instance_stop.json", func() {
		Expect(d.PutDeployment(redisManifest(serviceInstance, "16.1.0"))).To(Succeed())
		c.contentType = "text/yaml"
		r := c.do(http.MethodPut, "/deployments/"+serviceInstance+"/jobs/redis/0?state=stopped", []byte{})
		c.contentType = ""
		c.waitTask(taskIDOf(r))
		got := c.getJSON("/events?object_type=instance&deployment=" + serviceInstance).([]any)
		want := fixture("events_instance_stop.json").([]any)
		Expect(got).To(HaveLen(2))
		for i := range got {
			expectShape(got[i], want[i])
			Expect(ev(got[i])["action"]).To(Equal(ev(want[i])["action"]))
		}
	})
})

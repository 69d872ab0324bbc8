package sim_test

import (
	"crypto/sha1"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

// errandManifest is twoRedis with a job run as an errand (status-check)
// beside redis on both redis instances, and the smoke-tests errand group.
func errandManifest(name string) string {
	return strings.Replace(twoRedis(name), "  - name: redis\n    release: redis\n",
		"  - name: redis\n    release: redis\n  - name: status-check\n    release: redis\n", 1)
}

var _ = Describe("errands (bosh errands, bosh run-errand)", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: 10 * time.Millisecond, ErrandJobs: []string{"status-check"}})
		c = newClient(d)
		Expect(d.PutDeployment(errandManifest("e1"))).To(Succeed())
	})

	// run posts what the CLI's RunErrand sends and returns the 302.
	run := func(deployment, errand, body string) reply {
		c.contentType = "application/json"
		defer func() { c.contentType = "" }()
		return c.do(http.MethodPost, "/deployments/"+deployment+"/errands/"+errand+"/runs", []byte(body))
	}
	// runDone runs an errand to its end and returns the task and its result lines.
	runDone := func(errand, body string) (map[string]any, []map[string]any) {
		GinkgoHelper()
		r := run("e1", errand, body)
		Expect(r.status).To(Equal(http.StatusFound), "%s", r.body)
		t := c.waitTask(taskIDOf(r))
		var lines []map[string]any
		if out := c.get("/tasks/" + itoa(taskIDOf(r)) + "/output?type=result"); out.status == http.StatusOK {
			for _, l := range ndjson(out.body) {
				lines = append(lines, ev(l))
			}
		}
		return t, lines
	}
	eventLines := func(id int) []map[string]any {
		var out []map[string]any
		for _, l := range ndjson(c.get("/tasks/" + itoa(id) + "/output?type=event").body) {
			out = append(out, ev(l))
		}
		return out
	}
	vmGroups := func() []string {
		var out []string
		for _, v := range c.getJSON("/deployments/e1/vms").([]any) {
			out = append(out, ev(v)["job"].(string))
		}
		return out
	}
	const allDefault = `{"keep-alive": false, "when-changed": false, "instances": []}`

	It("lists the errand instance groups, then the jobs run as errands", func() {
		Expect(c.getJSON("/deployments/e1/errands")).To(Equal([]any{
			map[string]any{"name": "smoke-tests"}, map[string]any{"name": "status-check"}}))
		r := c.get("/deployments/nope/errands")
		Expect(r.status).To(Equal(http.StatusNotFound))
		Expect(r.json()).To(Equal(map[string]any{"code": 70000.0, "description": "Deployment 'nope' doesn't exist"}))
	})

	It("runs an errand instance group on its VM made for the run, with a result line, logs and events", func() {
		r := run("e1", "smoke-tests", allDefault)
		Expect(r.status).To(Equal(http.StatusFound))
		id := taskIDOf(r)
		t := c.waitTask(id)
		Expect(t).To(And(HaveKeyWithValue("state", "done"), HaveKeyWithValue("result", "1 succeeded, 0 errored, 0 canceled"),
			HaveKeyWithValue("description", "run errand smoke-tests from deployment e1"), HaveKeyWithValue("deployment", "e1")))

		lines := ndjson(c.get("/tasks/" + itoa(id) + "/output?type=result").body)
		Expect(lines).To(HaveLen(1))
		line := ev(lines[0])
		smoke := d.InstanceIDs("e1", "smoke-tests")[0]
		Expect(line).To(And(HaveKeyWithValue("instance", map[string]any{"group": "smoke-tests", "id": smoke}),
			HaveKeyWithValue("errand_name", "smoke-tests"), HaveKeyWithValue("exit_code", 0.0),
			HaveKeyWithValue("stdout", ContainSubstring("smoke-tests")), HaveKeyWithValue("stderr", "")))
		logs := ev(line["logs"])
		blob := c.get("/resources/" + logs["blobstore_id"].(string))
		Expect(blob.status).To(Equal(http.StatusOK))
		sum := sha1.Sum(blob.body)
		Expect(logs["sha1"]).To(Equal(hex.EncodeToString(sum[:])))

		var stages []string
		for _, l := range eventLines(id) {
			if l["state"] == "started" {
				stages = append(stages, l["stage"].(string)+": "+l["task"].(string))
			}
		}
		label := "smoke-tests/" + smoke + " (0)"
		Expect(stages).To(Equal([]string{"Preparing deployment: Preparing deployment",
			"Preparing package compilation: Finding packages to compile", "Creating missing vms: " + label,
			"Updating instance: " + label + " (canary)", "Running errand: " + label,
			"Fetching logs for smoke-tests/" + smoke + " (0): Finding and packing log files"}))

		var runs []map[string]any
		for _, e := range c.getJSON("/events?task=" + itoa(id)).([]any) {
			if ev(e)["object_type"] == "errand" {
				runs = append(runs, ev(e))
			}
		}
		Expect(runs).To(HaveLen(2)) // newest first
		Expect(runs[1]).To(And(HaveKeyWithValue("action", "run"), HaveKeyWithValue("object_name", "smoke-tests"),
			HaveKeyWithValue("instance", label), HaveKeyWithValue("deployment", "e1"), Not(HaveKey("parent_id"))))
		Expect(runs[0]).To(And(HaveKeyWithValue("parent_id", runs[1]["id"]), HaveKeyWithValue("context", map[string]any{"exit_code": 0.0})))
		Expect(vmGroups()).NotTo(ContainElement("smoke-tests"), "the errand's VM is deleted after the run")
	})

	It("keeps the errand's VM with keep-alive, and deletes it after a run without", func() {
		runDone("smoke-tests", `{"keep_alive": true}`)
		Expect(vmGroups()).NotTo(ContainElement("smoke-tests"), "the Director reads keep-alive, with a hyphen, as the CLI sends it")

		t, _ := runDone("smoke-tests", `{"keep-alive": true, "when-changed": false, "instances": []}`)
		Expect(t["state"]).To(Equal("done"))
		Expect(vmGroups()).To(ContainElement("smoke-tests"))

		r := run("e1", "smoke-tests", allDefault)
		c.waitTask(taskIDOf(r))
		for _, l := range eventLines(taskIDOf(r)) {
			Expect(l["stage"]).NotTo(Equal("Creating missing vms"), "the kept VM is used")
		}
		Expect(vmGroups()).NotTo(ContainElement("smoke-tests"))
	})

	It("runs a colocated errand job on every instance, or on those the instances filter names", func() {
		r := run("e1", "status-check", allDefault)
		t := c.waitTask(taskIDOf(r))
		Expect(t["result"]).To(Equal("2 succeeded, 0 errored, 0 canceled"))
		Expect(eventLines(taskIDOf(r))).To(ContainElement(And(HaveKeyWithValue("type", "warning"), HaveKeyWithValue("message",
			"Executing errand on multiple instances in parallel. Use the `--instance` flag to run the errand on a single instance."))))
		var lines []map[string]any
		for _, l := range ndjson(c.get("/tasks/" + itoa(taskIDOf(r)) + "/output?type=result").body) {
			lines = append(lines, ev(l))
		}
		Expect(lines).To(HaveLen(2))
		Expect(lines).To(HaveEach(HaveKeyWithValue("instance", HaveKeyWithValue("group", "redis"))))

		ids := d.InstanceIDs("e1", "redis")
		_, lines = runDone("status-check", `{"keep-alive": false, "when-changed": false, "instances": [{"group": "redis", "id": "1"}]}`)
		Expect(lines).To(ConsistOf(HaveKeyWithValue("instance", map[string]any{"group": "redis", "id": ids[1]})))
		_, lines = runDone("status-check", `{"instances": [{"group": "redis", "id": "`+ids[0]+`"}]}`)
		Expect(lines).To(ConsistOf(HaveKeyWithValue("instance", map[string]any{"group": "redis", "id": ids[0]})))

		t, _ = runDone("status-check", `{"instances": [{"group": "redis", "id": "7"}]}`)
		Expect(t).To(And(HaveKeyWithValue("state", "error"),
			HaveKeyWithValue("result", `No instances match selection criteria: [{"group" => "redis", "id" => "7"}]`)))
		t, _ = runDone("smoke-tests", `{"instances": [{"group": "smoke-tests"}]}`)
		Expect(t).To(And(HaveKeyWithValue("state", "error"),
			HaveKeyWithValue("result", "Filtering by instances is not supported when running errand by instance group name")))
	})

	It("skips a when-changed run when nothing changed since the errand's last successful run", func() {
		whenChanged := `{"keep-alive": false, "when-changed": true, "instances": []}`
		t, lines := runDone("smoke-tests", whenChanged)
		Expect(t["result"]).To(Equal("1 succeeded, 0 errored, 0 canceled"))
		Expect(lines).To(HaveLen(1))

		t, lines = runDone("smoke-tests", whenChanged)
		Expect(t).To(And(HaveKeyWithValue("state", "done"), HaveKeyWithValue("result", "skipped - no changes detected")))
		Expect(lines).To(BeEmpty(), "a skipped run has no result")
		_, lines = runDone("smoke-tests", allDefault)
		Expect(lines).To(HaveLen(1), "without when-changed it runs")

		Expect(d.PutDeployment(strings.Replace(errandManifest("e1"), "vm_type: small", "vm_type: medium", 1))).To(Succeed())
		_, lines = runDone("smoke-tests", whenChanged)
		Expect(lines).To(HaveLen(1), "the manifest changed")

		admin := c.anonymous()
		Expect(admin.do(http.MethodPut, "/_sim/errands", []byte(`{"outcomes": [{"errand": "smoke-tests", "exit_code": 1}]}`)).status).
			To(Equal(http.StatusNoContent))
		_, lines = runDone("smoke-tests", allDefault)
		Expect(lines).To(ConsistOf(HaveKeyWithValue("exit_code", 1.0)))
		Expect(admin.do(http.MethodPut, "/_sim/errands", []byte(`{"outcomes": []}`)).status).To(Equal(http.StatusNoContent))
		_, lines = runDone("smoke-tests", whenChanged)
		Expect(lines).To(HaveLen(1), "the last run failed: nothing counts as unchanged")
	})

	It("ends runs as scripted: exit code and stderr in the result, the task done, by deployment first", func() {
		d = start(sim.Options{TaskDuration: 10 * time.Millisecond, Errands: []sim.ErrandOutcome{
			{Errand: "smoke-tests", ExitCode: 3, Stdout: "2 failures\n", Stderr: "boom\n"},
			{Errand: "smoke-tests", Deployment: "e1", ExitCode: 0, Stdout: "fine\n"}}})
		c = newClient(d)
		Expect(d.PutDeployment(errandManifest("e1"))).To(Succeed())
		Expect(d.PutDeployment(errandManifest("e2"))).To(Succeed())
		_, lines := runDone("smoke-tests", allDefault)
		Expect(lines).To(ConsistOf(And(HaveKeyWithValue("exit_code", 0.0), HaveKeyWithValue("stdout", "fine\n"))))

		r := run("e2", "smoke-tests", allDefault)
		id := taskIDOf(r)
		Expect(c.waitTask(id)).To(And(HaveKeyWithValue("state", "done"), HaveKeyWithValue("result", "0 succeeded, 1 errored, 0 canceled")))
		Expect(ndjson(c.get("/tasks/" + itoa(id) + "/output?type=result").body)).To(ConsistOf(And(
			HaveKeyWithValue("exit_code", 3.0), HaveKeyWithValue("stdout", "2 failures\n"), HaveKeyWithValue("stderr", "boom\n"))))

		admin := c.anonymous()
		Expect(admin.do(http.MethodPut, "/_sim/errands", []byte(`{"outcomes": [{"errand": "smoke-tests", "exit_code": 137}]}`)).status).
			To(Equal(http.StatusNoContent))
		Expect(admin.getJSON("/_sim/errands")).To(Equal(map[string]any{"jobs": []any{},
			"outcomes": []any{map[string]any{"errand": "smoke-tests", "exit_code": 137.0, "stdout": "", "stderr": ""}}}))
		t, _ := runDone("smoke-tests", allDefault)
		Expect(t["result"]).To(Equal("0 succeeded, 0 errored, 1 canceled"))

		Expect(admin.do(http.MethodPost, "/_sim/reset", nil).status).To(Equal(http.StatusNoContent))
		_, lines = runDone("smoke-tests", allDefault)
		Expect(lines).To(ConsistOf(HaveKeyWithValue("stdout", "fine\n")), "a reset brings back the outcomes of the options")
		for _, bad := range []string{`{"outcomes": [{"exit_code": 1}]}`, `{"outcomes": [{"errand": "x", "exit_code": 256}]}`,
			`{"jobs": [""]}`, `{"nope": 1}`} {
			Expect(admin.do(http.MethodPut, "/_sim/errands", []byte(bad)).status).To(Equal(http.StatusBadRequest), bad)
		}
	})

	It("refuses an unknown errand, a group that is no errand and a stopped instance as the Director, and an unknown deployment at once", func() {
		for errand, want := range map[string][2]any{
			"nope":  {70009.0, "Errand 'nope' doesn't exist"},
			"redis": {510000.0, "Instance group 'redis' is not an errand. To mark an instance group as an errand set its lifecycle to 'errand' in the deployment manifest."},
		} {
			r := run("e1", errand, allDefault)
			Expect(r.status).To(Equal(http.StatusFound))
			id := taskIDOf(r)
			Expect(c.waitTask(id)).To(And(HaveKeyWithValue("state", "error"),
				HaveKeyWithValue("result", HavePrefix(want[1].(string)[:min(40, len(want[1].(string)))]))), "cut at 128 characters as the Director cuts a result")
			events := eventLines(id)
			Expect(events[len(events)-1]).To(HaveKeyWithValue("error", map[string]any{"code": want[0], "message": want[1]}))
			Expect(events[len(events)-2]).To(And(HaveKeyWithValue("stage", "Preparing deployment"), HaveKeyWithValue("state", "failed")))
		}

		r := run("nope", "smoke-tests", allDefault)
		Expect(r.status).To(Equal(http.StatusNotFound))
		Expect(r.json()).To(Equal(map[string]any{"code": 70000.0, "description": "Deployment 'nope' doesn't exist"}))

		c.contentType = "text/yaml"
		c.waitTask(taskIDOf(c.do(http.MethodPut, "/deployments/e1/jobs/redis/1?state=stopped", []byte{})))
		c.contentType = ""
		t, _ := runDone("status-check", allDefault)
		Expect(t).To(And(HaveKeyWithValue("state", "error"), HaveKeyWithValue("result",
			"Instance(s) 'redis/"+d.InstanceIDs("e1", "redis")[1]+"' is stopped, unable to run errand. Maybe start vm?")))
		_, lines := runDone("status-check", `{"instances": [{"group": "redis", "id": "0"}]}`)
		Expect(lines).To(HaveLen(1), "a filter that leaves the stopped instance out runs")
	})

	It("holds the deployment's lock while it runs, as a deploy does", func() {
		d = start(sim.Options{TaskDuration: 10 * time.Millisecond, LockTimeout: 200 * time.Millisecond})
		c = newClient(d)
		Expect(d.PutDeployment(errandManifest("e1"))).To(Succeed())
		d.Knobs().SetTaskDuration(5 * time.Second)
		errandTask := taskIDOf(run("e1", "smoke-tests", allDefault))
		c.waitLocked(errandTask)
		d.Knobs().SetTaskDuration(10 * time.Millisecond)
		Expect(c.getJSON("/deployments")).To(ContainElement(And(HaveKeyWithValue("name", "e1"), HaveKeyWithValue("locked", true))))

		deployTask := c.deploy(errandManifest("e1"))
		Expect(c.waitTask(deployTask)).To(HaveKeyWithValue("state", "error"))
		events := eventLines(deployTask)
		Expect(events[len(events)-1]).To(HaveKeyWithValue("error", HaveKeyWithValue("message", MatchRegexp(
			`^Failed to acquire lock for lock:deployment:e1 uid: .*Locking task id is `+itoa(errandTask)+
				`, description: 'run errand smoke-tests from deployment e1'$`))))
		Expect(d.CancelTask(errandTask)).To(Succeed())
		Expect(c.waitTask(errandTask)).To(HaveKeyWithValue("state", "cancelled"))
		Expect(c.getJSON("/locks")).To(BeEmpty())
	})
})

package sim_test

import (
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("the Director API", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: 10 * time.Millisecond, ExternalHost: "127.0.0.2:25555"})
		c = newClient(d)
	})

	Describe("authentication", func() {
		It("answers missing or wrong basic credentials with the plain-text 401", func() {
			for _, cl := range []*client{c.anonymous(), {base: c.base, http: c.http, user: "admin", pass: "wrong"}} {
				r := cl.get("/deployments")
				Expect(r.status).To(Equal(http.StatusUnauthorized))
				Expect(string(r.body)).To(Equal("Not authorized: '/deployments'\n"))
				Expect(r.header.Get("WWW-Authenticate")).To(Equal(`Basic realm="BOSH Director"`))
				Expect(r.header.Get("Content-Type")).To(HavePrefix("text/plain"))
			}
		})

		It("serves /info without credentials", func() {
			Expect(c.anonymous().get("/info").status).To(Equal(http.StatusOK))
		})

		It("authenticates before refusing unknown routes under a Director controller", func() {
			Expect(c.anonymous().get("/deployments/x/y").status).To(Equal(http.StatusUnauthorized))
			Expect(c.get("/deployments/x/y").status).To(Equal(http.StatusNotFound))
		})

		It("refuses a context id longer than 64 characters", func() {
			c.header = http.Header{"X-Bosh-Context-Id": {strings.Repeat("x", 65)}}
			r := c.get("/deployments")
			Expect(r.status).To(Equal(http.StatusBadRequest))
			Expect(r.json()).To(HaveKeyWithValue("code", 190024.0))
		})
	})

	It("answers unknown routes with the Director's text", func() {
		r := c.anonymous().get("/foo")
		Expect(r.status).To(Equal(http.StatusNotFound))
		Expect(string(r.body)).To(Equal("Endpoint '/foo' not found."))
		Expect(c.do(http.MethodPut, "/deployments", nil).body).To(BeEquivalentTo("Endpoint '/deployments' not found."))
	})

	It("only takes manifests sent as text/yaml, as the Director's route does", func() {
		c.contentType = "application/json"
		r := c.do(http.MethodPost, "/deployments", []byte(redisManifest("a", "1")))
		Expect(r.status).To(Equal(http.StatusNotFound))
		Expect(c.getJSON("/deployments")).To(BeEmpty())
	})

	It("redirects to the task with an absolute Location on the host the Director believes it has", func() {
		r := c.do(http.MethodPost, "/deployments", []byte(redisManifest("a", "1")))
		Expect(r.status).To(Equal(http.StatusFound))
		Expect(r.header.Get("Location")).To(MatchRegexp(`^http://127\.0\.0\.2:25555/tasks/\d+$`))
		r = c.do(http.MethodDelete, "/deployments/a", nil)
		Expect(r.header.Get("Location")).To(MatchRegexp(`^http://127\.0\.0\.2:25555/tasks/\d+$`))
	})

	It("gives manifests back byte for byte", func() {
		manifest := "# a comment\r\nname:   odd-spacing   \r\nreleases: []  # trailing\n\n\nproperties: {html: \"<a & b>\", unicode: \"ü ✓\"}\n"
		c.waitTask(c.deploy(manifest))
		Expect(c.getJSON("/deployments/odd-spacing")).To(Equal(map[string]any{"manifest": manifest}))
		Expect(d.PutDeployment(manifest + "# changed\n")).To(Succeed())
		Expect(c.getJSON("/deployments/odd-spacing")).To(Equal(map[string]any{"manifest": manifest + "# changed\n"}))
	})

	It("creates, updates and deletes deployments through tasks", func() {
		Expect(c.waitTask(c.deploy(redisManifest("r1", "16.0.0")))["state"]).To(Equal("done"))
		Expect(c.getJSON("/deployments")).To(ConsistOf(HaveKeyWithValue("releases", []any{map[string]any{"name": "redis", "version": "16.0.0"}})))
		Expect(c.waitTask(c.deploy(redisManifest("r1", "16.1.0")))["state"]).To(Equal("done"))
		Expect(c.getJSON("/deployments")).To(ConsistOf(HaveKeyWithValue("releases", []any{map[string]any{"name": "redis", "version": "16.1.0"}})))

		del := c.waitTask(c.deleteDeployment("r1"))
		Expect(del["state"]).To(Equal("done"))
		Expect(del["description"]).To(Equal("delete deployment r1"))
		Expect(c.getJSON("/deployments")).To(BeEmpty())
		Expect(c.get("/deployments/r1").status).To(Equal(http.StatusNotFound))
	})

	It("answers the deletion of a deployment that does not exist 404 before any task", func() {
		r := c.do(http.MethodDelete, "/deployments/never-was", nil)
		Expect(r.status).To(Equal(http.StatusNotFound))
		Expect(r.json()).To(Equal(map[string]any{"code": 70000.0, "description": "Deployment 'never-was' doesn't exist"}))
		Expect(c.getJSON("/tasks?verbose=2")).To(BeEmpty())
	})

	It("leaves the deployment as it was after a dry run", func() {
		c.waitTask(c.deploy(redisManifest("r1", "16.0.0")))
		r := c.do(http.MethodPost, "/deployments?dry_run=true", []byte(redisManifest("r1", "16.1.0")))
		Expect(c.waitTask(taskIDOf(r))["state"]).To(Equal("done"))
		Expect(c.getJSON("/deployments/r1")).To(Equal(map[string]any{"manifest": redisManifest("r1", "16.0.0")}))
	})

	It("answers /vms, /instances and ?format=full with 404 for unknown deployments", func() {
		for _, p := range []string{"/vms", "/instances", "/vms?format=full"} {
			r := c.get("/deployments/nope" + p)
			Expect(r.status).To(Equal(http.StatusNotFound), p)
			Expect(r.json()).To(HaveKeyWithValue("code", 70000.0))
		}
	})

	It("keeps instance ids across requests and updates", func() {
		Expect(d.PutDeployment(redisManifest("r1", "16.0.0"))).To(Succeed())
		before := c.getJSON("/deployments/r1/instances")
		Expect(d.PutDeployment(redisManifest("r1", "16.1.0"))).To(Succeed())
		Expect(c.getJSON("/deployments/r1/instances")).To(Equal(before))
	})

	It("records what happened in /events, newest first, filtered by deployment and before_id", func() {
		c.waitTask(c.deploy(redisManifest("r1", "16.0.0")))
		id := c.deploy(redisManifest("r2", "16.0.0"))
		c.waitTask(id)
		var events []any
		for _, e := range c.getJSON("/events?deployment=r2").([]any) {
			if t := e.(map[string]any)["object_type"]; t == "deployment" || t == "lock" {
				events = append(events, e)
			}
		}
		Expect(events).To(HaveLen(4))
		var actions []string
		for _, e := range events {
			ev := e.(map[string]any)
			Expect(ev["task"]).To(Equal(itoa(id)))
			Expect(ev["user"]).To(Equal("admin"))
			actions = append(actions, ev["object_type"].(string)+":"+ev["action"].(string))
		}
		Expect(actions).To(Equal([]string{"lock:release", "deployment:create", "lock:acquire", "deployment:create"}),
			"the start is recorded before the lock is taken, the end before it is released")
		older := c.getJSON("/events?before_id=" + events[3].(map[string]any)["id"].(string)).([]any)
		Expect(older).NotTo(BeEmpty())
		for _, e := range older {
			Expect(e.(map[string]any)["deployment"]).To(Equal("r1"))
		}
	})

	It("answers at most 200 events", func() {
		d.Knobs().SetTaskDuration(0)
		for i := range 60 {
			c.waitTask(c.deploy(redisManifest("r"+itoa(i), "1")))
		}
		Expect(c.getJSON("/events")).To(HaveLen(200))
	})

	It("requires latest on /configs and lists older cloud configs as not current", func() {
		Expect(c.get("/configs").json()).To(HaveKeyWithValue("code", 40001.0))
		d.SetCloudConfig("new: true\n")
		all := c.getJSON("/configs?latest=false&type=cloud").([]any)
		Expect(all).To(HaveLen(2))
		Expect(all[0]).To(HaveKeyWithValue("current", true))
		Expect(all[0]).To(HaveKeyWithValue("content", "new: true\n"))
		Expect(all[1]).To(HaveKeyWithValue("current", false))
	})

	It("keeps PutDeployment and RemoveDeployment in the listing", func() {
		Expect(c.getJSON("/deployments")).To(BeEmpty()) // cached empty listing
		Expect(d.PutDeployment(redisManifest("b", "1"))).To(Succeed())
		Expect(d.PutDeployment(redisManifest("a", "1"))).To(Succeed())
		names := func() []any {
			var out []any
			for _, e := range c.getJSON("/deployments?exclude_configs=true").([]any) {
				out = append(out, e.(map[string]any)["name"])
			}
			return out
		}
		Expect(names()).To(Equal([]any{"a", "b"}))
		d.RemoveDeployment("a")
		Expect(names()).To(Equal([]any{"b"}))
		Expect(d.PutDeployment("releases: []\n")).To(MatchError(sim.ErrInvalidManifest))
	})
})

package broker_test

import (
	"context"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

// perBindingManifest declares a user per live binding, as a Redis ACL would.
const perBindingManifest = manifestTemplate + `  users:
{{- range .Bindings }}
  - {name: {{ .Secrets.username }}, password: {{ .Secrets.password }}, binding: {{ .ID }}}
{{- end }}
`

// perBindingCredentials gives each binding its own user.
const perBindingCredentials = `host: {{ .Host }}
username: {{ .Binding.Secrets.username }}
password: {{ .Binding.Secrets.password }}
`

var _ = Describe("per_binding plans: asynchronous bindings with credentials of their own", func() {
	var e *env
	ctx := context.Background()
	const id = "pb-1"
	bindingPath := func(bid string) string { return instancePath(id) + "/service_bindings/" + bid }
	bindBody := map[string]any{"service_id": "redis", "plan_id": "redis-small", "app_guid": "app"}
	query := "?accepts_incomplete=true&service_id=redis&plan_id=redis-small"

	// users reads the users the deployed manifest declares, as the Director has it.
	users := func() []string {
		GinkgoHelper()
		text, err := e.client.Manifest(ctx, "redis-small-"+id)
		Expect(err).NotTo(HaveOccurred())
		var m struct {
			Properties struct {
				Users []struct{ Name, Binding string } `yaml:"users"`
			} `yaml:"properties"`
		}
		Expect(yaml.Unmarshal([]byte(text), &m)).To(Succeed())
		var out []string
		for _, u := range m.Properties.Users {
			out = append(out, u.Binding+"="+u.Name)
		}
		return out
	}
	poll := func(bid, op string) string {
		a := e.request("GET", bindingPath(bid)+"/last_operation?operation="+op, nil)
		if a.Status == http.StatusGone {
			return "gone"
		}
		s, _ := a.Body["state"].(string)
		return s
	}

	BeforeEach(func() {
		e = newEnv(func(o *broker.Options) {
			p := &o.Catalog.Services[0].Plans[0]
			p.Bindings = catalog.BindingsPerBinding
			p.Manifest, p.Credentials = mustTemplate("manifest.yml", perBindingManifest), mustTemplate("credentials.yml", perBindingCredentials)
		})
		e.provision(id, "redis-small", nil)
		e.eventuallyState(id, "succeeded")
	})

	It("refuses a bind whose deploy would change more than its binding's user, storing nothing", func() {
		recorded, err := e.client.Manifest(ctx, "redis-small-"+id)
		Expect(err).NotTo(HaveOccurred())
		moved := strings.NewReplacer("{name: default}", "{name: services}", "- name: default", "- name: services").
			Replace(recorded) // its network, changed behind the broker's back
		Expect(moved).NotTo(Equal(recorded))
		task, err := e.client.Deploy(ctx, []byte(moved))
		Expect(err).NotTo(HaveOccurred())
		_, err = e.client.WaitTask(ctx, task.ID, 20*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		tasks := e.director.Stats().Tasks

		a := e.request("PUT", bindingPath("pb-x")+"?accepts_incomplete=true", bindBody)
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("network at instance_groups/redis/networks"))
		Expect(e.director.Stats().Tasks).To(Equal(tasks), "nothing deployed")
		_, ok, err := e.store.Secret(ctx, id+"/bindings/pb-x")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "no binding stored")
	})

	It("keeps the bindings' truth through a restore of an older backup: unbound stays unbound, a later binding stays", func() {
		bind := func(bid string) {
			GinkgoHelper()
			Expect(e.request("PUT", bindingPath(bid)+"?accepts_incomplete=true", bindBody).Status).To(Equal(http.StatusAccepted))
			Eventually(func() string { return poll(bid, "bind") }).WithTimeout(10 * time.Second).Should(Equal("succeeded"))
		}
		bind("pb-old")
		backup, err := e.store.BackupAll(ctx, id) // holds pb-old, listed
		Expect(err).NotTo(HaveOccurred())
		Expect(e.request("DELETE", bindingPath("pb-old")+query, nil).Status).To(Equal(http.StatusAccepted))
		Eventually(func() string { return poll("pb-old", "unbind") }).WithTimeout(10 * time.Second).Should(Equal("gone"))
		bind("pb-new")
		creds := e.request("GET", bindingPath("pb-new"), nil).Body["credentials"]

		rep, err := e.store.Restores.RestoreReported(ctx, id, backup)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Bindings).To(ConsistOf(
			And(HaveField("BindingID", "pb-old"), HaveField("Outcome", "skipped"), HaveField("Reason", ContainSubstring("unbound"))),
			And(HaveField("BindingID", "pb-new"), HaveField("Outcome", "listed"))))
		Expect(e.request("GET", bindingPath("pb-old"), nil).Status).To(Equal(http.StatusNotFound), "not brought back")
		got := e.request("GET", bindingPath("pb-new"), nil)
		Expect(got.Status).To(Equal(http.StatusOK), "not dropped")
		Expect(got.Body["credentials"]).To(Equal(creds))
		list, _, err := e.store.Secret(ctx, id+"/binding-ids")
		Expect(err).NotTo(HaveOccurred())
		Expect(list["ids"]).To(ConsistOf("pb-new"))

		// The next deploy declares the live binding's user only.
		up := e.request("PATCH", instancePath(id)+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "parameters": map[string]any{"maxmemory": "1gb"}})
		Expect(up.Status).To(Equal(http.StatusAccepted), up.Raw)
		e.eventuallyState(id, "succeeded")
		Expect(users()).To(Equal([]string{"pb-new=" + creds.(map[string]any)["username"].(string)}))
	})

	It("gives each binding its own user, deployed through a task, and takes it away on unbind after a backup", func() {
		refused := e.request("PUT", bindingPath("pb-a"), bindBody)
		Expect(refused.Status).To(Equal(http.StatusUnprocessableEntity), refused.Raw)
		Expect(refused.Body["error"]).To(Equal("AsyncRequired"))

		e.director.Knobs().SetTaskDuration(300 * time.Millisecond)
		a := e.request("PUT", bindingPath("pb-a")+"?accepts_incomplete=true", bindBody)
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Expect(a.Body["operation"]).To(Equal("bind"))
		Expect(e.request("GET", bindingPath("pb-a"), nil).Status).To(Equal(http.StatusNotFound), "not there while its bind is under way")
		Expect(e.request("PUT", bindingPath("pb-b")+"?accepts_incomplete=true", bindBody).Status).To(Equal(http.StatusUnprocessableEntity),
			"one binding operation at a time")
		up := e.request("PATCH", instancePath(id)+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "parameters": map[string]any{"x": 1}})
		Expect(up.Status).To(Equal(http.StatusUnprocessableEntity), "no update while a bind is under way: "+up.Raw)
		Expect(up.Body["error"]).To(Equal("ConcurrencyError"))
		Eventually(func() string { return poll("pb-a", "bind") }).WithTimeout(10 * time.Second).Should(Equal("succeeded"))
		Expect(e.request("PUT", bindingPath("pb-b")+"?accepts_incomplete=true", bindBody).Status).To(Equal(http.StatusAccepted))
		Eventually(func() string { return poll("pb-b", "bind") }).WithTimeout(10 * time.Second).Should(Equal("succeeded"))

		ga, gb := e.request("GET", bindingPath("pb-a"), nil), e.request("GET", bindingPath("pb-b"), nil)
		Expect(ga.Status).To(Equal(http.StatusOK))
		ca, cb := ga.Body["credentials"].(map[string]any), gb.Body["credentials"].(map[string]any)
		Expect(ca["username"]).NotTo(Equal(cb["username"]))
		Expect(ca["password"]).NotTo(Equal(cb["password"]))
		Expect(users()).To(Equal([]string{"pb-a=" + ca["username"].(string), "pb-b=" + cb["username"].(string)}),
			"the deployed manifest declares both, in the order they were made")
		again := e.request("PUT", bindingPath("pb-a")+"?accepts_incomplete=true", bindBody)
		Expect(again.Status).To(Equal(http.StatusOK), "the same bind again")
		Expect(again.Body["credentials"]).To(HaveKeyWithValue("username", ca["username"]))

		Expect(e.request("DELETE", bindingPath("pb-a")+"?service_id=redis&plan_id=redis-small", nil).Status).To(Equal(http.StatusUnprocessableEntity),
			"AsyncRequired")
		u := e.request("DELETE", bindingPath("pb-a")+query, nil)
		Expect(u.Status).To(Equal(http.StatusAccepted), u.Raw)
		Expect(u.Body["operation"]).To(Equal("unbind"))
		Eventually(func() string { return poll("pb-a", "unbind") }).WithTimeout(10 * time.Second).Should(BeElementOf("succeeded", "gone"))
		Expect(poll("pb-a", "unbind")).To(Equal("gone"), "410 once the binding is gone")
		Expect(users()).To(Equal([]string{"pb-b=" + cb["username"].(string)}), "its user is gone from the service")
		_, ok, err := e.store.Secret(ctx, id+"/bindings/pb-a")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "its secrets are gone from Vault")
		backups, err := e.store.Backups(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(backups).NotTo(BeEmpty(), "after a backup")
		Expect(e.request("GET", bindingPath("pb-b"), nil).Status).To(Equal(http.StatusOK), "the other still works")
		Expect(metric(e.registry, "blacksmith_broker_operations_total", map[string]string{"type": "bind", "state": "succeeded"})).To(Equal(2.0))
		Expect(metric(e.registry, "blacksmith_broker_operations_total", map[string]string{"type": "unbind", "state": "succeeded"})).To(Equal(1.0))
	})

	It("rotates a binding: binding_rotatable in the catalog, a successor from a body naming only its predecessor, both valid", func() {
		cat := e.request("GET", "/v2/catalog", nil)
		Expect(cat.Status).To(Equal(http.StatusOK))
		rotates := map[string]any{}
		for _, svc := range cat.Body["services"].([]any) {
			for _, p := range svc.(map[string]any)["plans"].([]any) {
				plan := p.(map[string]any)
				rotates[plan["id"].(string)] = plan["binding_rotatable"]
			}
		}
		Expect(rotates).To(HaveKeyWithValue("redis-small", true))
		Expect(rotates).To(HaveKeyWithValue("redis-large", BeNil()), "a shared plan does not rotate")

		Expect(e.request("PUT", bindingPath("pb-a")+"?accepts_incomplete=true", bindBody).Status).To(Equal(http.StatusAccepted))
		Eventually(func() string { return poll("pb-a", "bind") }).WithTimeout(10 * time.Second).Should(Equal("succeeded"))
		Expect(e.request("PUT", bindingPath("pb-z")+"?accepts_incomplete=true", map[string]any{"predecessor_binding_id": "nope"}).Status).
			To(Equal(http.StatusBadRequest), "no such predecessor")
		s := e.request("PUT", bindingPath("pb-a2")+"?accepts_incomplete=true", map[string]any{"predecessor_binding_id": "pb-a"})
		Expect(s.Status).To(Equal(http.StatusAccepted), s.Raw)
		Eventually(func() string { return poll("pb-a2", "bind") }).WithTimeout(10 * time.Second).Should(Equal("succeeded"))
		ga, gs := e.request("GET", bindingPath("pb-a"), nil), e.request("GET", bindingPath("pb-a2"), nil)
		Expect(ga.Status).To(Equal(http.StatusOK), "the predecessor keeps working")
		Expect(gs.Status).To(Equal(http.StatusOK))
		ca, cs := ga.Body["credentials"].(map[string]any), gs.Body["credentials"].(map[string]any)
		Expect(cs["username"]).NotTo(Equal(ca["username"]), "the successor has a user of its own")
		Expect(users()).To(Equal([]string{"pb-a=" + ca["username"].(string), "pb-a2=" + cs["username"].(string)}))
		stored, _, err := e.store.Secret(ctx, id+"/bindings/pb-a2")
		Expect(err).NotTo(HaveOccurred())
		Expect(stored).To(HaveKeyWithValue("app_guid", "app"), "the predecessor's app")
		Expect(stored).To(HaveKeyWithValue("predecessor_binding_id", "pb-a"))
	})

	It("asks for Retry-After while a binding's operation is in progress, and answers 410 once it is unbound, whether the poll names the unbind or not", func() {
		e.director.Knobs().SetTaskDuration(2 * time.Second)
		Expect(e.request("PUT", bindingPath("pb-g")+"?accepts_incomplete=true", bindBody).Status).To(Equal(http.StatusAccepted))
		a := e.request("GET", bindingPath("pb-g")+"/last_operation?operation=bind", nil)
		Expect(a.Body).To(HaveKeyWithValue("state", "in progress"))
		Expect(a.Header.Get("Retry-After")).To(Equal("10"))
		Eventually(func() string { return poll("pb-g", "bind") }).WithTimeout(20 * time.Second).Should(Equal("succeeded"))
		Expect(e.request("DELETE", bindingPath("pb-g")+query, nil).Status).To(Equal(http.StatusAccepted))
		Eventually(func() string { return poll("pb-g", "unbind") }).WithTimeout(20 * time.Second).Should(Equal("gone"))
		bare := e.request("GET", bindingPath("pb-g")+"/last_operation", nil)
		Expect(bare.Status).To(Equal(http.StatusGone), "the history says it was unbound: %s", bare.Raw)
		Expect(bare.Raw).To(MatchJSON(`{}`))
		Expect(e.request("GET", bindingPath("pb-never")+"/last_operation", nil).Status).To(Equal(http.StatusNotFound), "never bound")
	})

	It("fails the bind, and deploys nothing, when the Director's task fails; the binding is no user of later deploys", func() {
		e.director.FailNextTask("redis-small-" + id)
		a := e.request("PUT", bindingPath("pb-x")+"?accepts_incomplete=true", bindBody)
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Eventually(func() string { return poll("pb-x", "bind") }).WithTimeout(10 * time.Second).Should(Equal("failed"))
		Expect(metric(e.registry, "blacksmith_broker_operations_total", map[string]string{"type": "bind", "state": "failed"})).To(Equal(1.0))
		Expect(e.request("GET", bindingPath("pb-x"), nil).Status).To(Equal(http.StatusNotFound))
		Expect(e.request("PUT", bindingPath("pb-y")+"?accepts_incomplete=true", bindBody).Status).To(Equal(http.StatusAccepted))
		Eventually(func() string { return poll("pb-y", "bind") }).WithTimeout(10 * time.Second).Should(Equal("succeeded"))
		Expect(strings.Join(users(), ",")).To(HavePrefix("pb-y="), "the failed binding's user is not declared")
		u := e.request("DELETE", bindingPath("pb-x")+query, nil)
		Expect(u.Status).To(Equal(http.StatusAccepted), "the platform cleans a failed bind up")
		Eventually(func() string { return poll("pb-x", "unbind") }).WithTimeout(10 * time.Second).Should(BeElementOf("succeeded", "gone"))
	})
})

var _ = Describe("a per_binding plan whose template fails for a binding", func() {
	It("refuses the bind with 500, storing and deploying nothing", func() {
		e := newEnv(func(o *broker.Options) {
			p := &o.Catalog.Services[0].Plans[0]
			p.Bindings = catalog.BindingsPerBinding
			p.Manifest = mustTemplate("manifest.yml", manifestTemplate+"  broken: {{ range .Bindings }}{{ index .ID 99 }}{{ end }}\n")
			p.Credentials = mustTemplate("credentials.yml", perBindingCredentials)
		})
		e.provision("pb-bad", "redis-small", nil)
		e.eventuallyState("pb-bad", "succeeded")
		before := e.director.Stats().Tasks
		a := e.request("PUT", instancePath("pb-bad")+"/service_bindings/x?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "app_guid": "app"})
		Expect(a.Status).To(Equal(http.StatusInternalServerError), a.Raw)
		Expect(a.Raw).NotTo(ContainSubstring("index out of range"), "no Go internals for the platform user")
		_, ok, err := e.store.Secret(context.Background(), "pb-bad/bindings/x")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "nothing stored")
		list, _, err := e.store.Secret(context.Background(), "pb-bad/binding-ids")
		Expect(err).NotTo(HaveOccurred())
		Expect(list).NotTo(HaveKey("ids"), "nothing listed")
		Expect(e.director.Stats().Tasks).To(Equal(before), "nothing deployed")
	})
})

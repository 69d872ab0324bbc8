package sim_test

import (
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

// cloudWithZ4 is the default cloud config with one more az.
var cloudWithZ4 = strings.Replace(sim.DefaultCloudConfig, "vm_types:\n", "- name: z4\n  cloud_properties: {}\nvm_types:\n", 1)

var _ = Describe("the typed config routes (/cloud_configs, /runtime_configs, /cpi_configs) and GET /configs/:id", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{})
		c = newClient(d)
		c.contentType = "text/yaml"
	})

	post := func(path, body string) reply { return c.do(http.MethodPost, path, []byte(body)) }
	expectCreated := func(path, body string) {
		GinkgoHelper()
		r := post(path, body)
		Expect(r.status).To(Equal(http.StatusCreated), "POST %s: %s", path, r.body)
		Expect(r.body).To(BeEmpty())
	}
	configEvents := func(objectType string) []any {
		return c.getJSON("/events?object_type=" + objectType).([]any)
	}
	configCount := func() int { return len(c.getJSON("/configs?latest=false").([]any)) }
	diff := func(path, body string) []any {
		GinkgoHelper()
		r := post(path, body)
		Expect(r.status).To(Equal(http.StatusOK), "POST %s: %s", path, r.body)
		return r.json().(map[string]any)["diff"].([]any)
	}

	Describe("GET", func() {
		It("lists a type's configs of one name, newest first, with only properties and created_at", func() {
			expectCreated("/cloud_configs", cloudWithZ4)
			list := c.getJSON("/cloud_configs?limit=5").([]any)
			Expect(list).To(HaveLen(2))
			Expect(list[0]).To(HaveKeyWithValue("properties", cloudWithZ4))
			Expect(list[1]).To(HaveKeyWithValue("properties", sim.DefaultCloudConfig))
			Expect(list[0]).To(HaveLen(2))
			Expect(list[0]).To(HaveKeyWithValue("created_at", MatchRegexp(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$`)))
			Expect(c.getJSON("/cloud_configs?limit=1&name=")).To(HaveLen(1), "an empty name is default")
			Expect(c.getJSON("/cloud_configs?limit=5&name=other")).To(BeEmpty())
			Expect(c.getJSON("/runtime_configs?limit=5")).To(BeEmpty())
			Expect(c.getJSON("/cpi_configs?limit=5")).To(BeEmpty())
		})

		DescribeTable("refuses a missing or non-integer limit with the Director's plain text",
			func(query, want string) {
				for _, p := range []string{"/cloud_configs", "/runtime_configs", "/cpi_configs"} {
					r := c.get(p + query)
					Expect(r.status).To(Equal(http.StatusBadRequest), p+query)
					Expect(string(r.body)).To(Equal(want), p+query)
				}
			},
			Entry("no limit", "", "limit is required"),
			Entry("an empty limit", "?limit=", "limit is required"),
			Entry("a word", "?limit=abc", "limit is invalid: 'abc' is not an integer"),
			Entry("a decimal", "?limit=1.5", "limit is invalid: '1.5' is not an integer"),
		)

		It("reads the limit as Ruby's Integer() and answers the empty 500 of Sequel for one below 1", func() {
			expectCreated("/cloud_configs", cloudWithZ4)
			Expect(c.getJSON("/cloud_configs?limit=%201%20")).To(HaveLen(1))
			Expect(c.getJSON("/cloud_configs?limit=0x10")).To(HaveLen(2))
			r := c.get("/cloud_configs?limit=0")
			Expect(r.status).To(Equal(http.StatusInternalServerError))
			Expect(r.body).To(BeEmpty())
		})

		It("authenticates before answering, and an unknown route under them after", func() {
			Expect(c.anonymous().get("/cloud_configs?limit=1").status).To(Equal(http.StatusUnauthorized))
			Expect(c.anonymous().get("/cpi_configs/x").status).To(Equal(http.StatusUnauthorized))
			Expect(c.get("/cpi_configs/x").status).To(Equal(http.StatusNotFound))
		})
	})

	Describe("POST", func() {
		It("stores a new config, answers 201 and records an update event by the caller", func() {
			expectCreated("/cloud_configs", cloudWithZ4)
			expectCreated("/cloud_configs?name=extra", "azs: []\n")
			latest := c.getJSON("/configs?latest=true&type=cloud").([]any)
			Expect(latest).To(ConsistOf(
				And(HaveKeyWithValue("name", "default"), HaveKeyWithValue("content", cloudWithZ4), HaveKeyWithValue("id", "2")),
				And(HaveKeyWithValue("name", "extra"), HaveKeyWithValue("content", "azs: []\n"), HaveKeyWithValue("id", "3"))))
			events := configEvents("cloud-config")
			Expect(events).To(HaveLen(2))
			Expect(events[0]).To(And(HaveKeyWithValue("action", "update"), HaveKeyWithValue("object_name", "extra"),
				HaveKeyWithValue("user", "admin"), Not(HaveKey("error")), Not(HaveKey("task"))))
			Expect(events[1]).To(HaveKeyWithValue("object_name", "default"))
		})

		It("stores nothing and records no event for the body of the current config", func() {
			expectCreated("/cloud_configs", sim.DefaultCloudConfig)
			Expect(configCount()).To(Equal(1))
			Expect(configEvents("cloud-config")).To(BeEmpty())
			expectCreated("/cloud_configs", cloudWithZ4)
			expectCreated("/cloud_configs", cloudWithZ4)
			Expect(configCount()).To(Equal(2))
			Expect(configEvents("cloud-config")).To(HaveLen(1))
		})

		DescribeTable("refuses what validate_manifest_yml refuses, and records the event with its error",
			func(body, want string) {
				for _, p := range []string{"/cloud_configs", "/runtime_configs", "/cpi_configs"} {
					r := post(p, body)
					Expect(r.status).To(Equal(http.StatusBadRequest), p)
					Expect(r.json()).To(And(HaveLen(2), HaveKeyWithValue("code", 440001.0), HaveKeyWithValue("description", MatchRegexp(want))), p)
				}
				Expect(configCount()).To(Equal(1))
				for _, objectType := range []string{"cloud-config", "runtime-config", "cpi-config"} {
					Expect(configEvents(objectType)).To(ConsistOf(And(HaveKeyWithValue("action", "update"),
						HaveKeyWithValue("error", MatchRegexp(want)))), objectType)
				}
			},
			Entry("an empty body", "", `^Manifest should not be empty$`),
			Entry("YAML it cannot read", "azs: [\n", `^Incorrect YAML structure of the uploaded manifest: yaml: line \d+: .+`),
			Entry("null, as the CLI sends an empty file", "null\n", `^Manifest should be a hash$`),
			Entry("a list", "- a\n", `^Manifest should be a hash$`),
		)

		It("only takes text/yaml, as the Director's routes", func() {
			c.contentType = "application/json"
			for _, p := range []string{"/cloud_configs", "/runtime_configs", "/cpi_configs", "/cloud_configs/diff"} {
				r := post(p, cloudWithZ4)
				Expect(r.status).To(Equal(http.StatusNotFound), p)
				Expect(string(r.body)).To(Equal("Endpoint '" + p + "' not found."))
			}
			Expect(configCount()).To(Equal(1))
		})

		It("stores a runtime config re-dumped, its release versions as strings, and compares the re-dumped text", func() {
			body := "releases:\n- name: dns\n  version: 1.10\naddons: [{name: dns, jobs: [{name: dns, release: dns}]}]\n"
			expectCreated("/runtime_configs?name=dns", body)
			expectCreated("/runtime_configs?name=dns", body)
			list := c.getJSON("/runtime_configs?limit=5&name=dns").([]any)
			Expect(list).To(HaveLen(1))
			stored := list[0].(map[string]any)["properties"].(string)
			Expect(stored).To(HavePrefix("---\n"))
			Expect(stored).To(ContainSubstring(`version: "1.1"`))
			Expect(stored).To(ContainSubstring("- name: dns\n        release: dns\n"), "flow style dropped")
			Expect(configEvents("runtime-config")).To(ConsistOf(HaveKeyWithValue("object_name", "dns")))
		})

		It("checks a cpi config as the Director's CpiManifestParser and records cpi-config events without a name", func() {
			r := post("/cpi_configs", "foo: bar\n")
			Expect(r.status).To(Equal(http.StatusBadRequest))
			Expect(r.json()).To(Equal(map[string]any{"code": 40001.0,
				"description": `Required property 'cpis' was not specified in object ({"foo" => "bar"})`}))
			r = post("/cpi_configs", "cpis: [{name: c1, type: warden}, {name: c2, type: warden, migrated_from: [{name: c1}]}]\n")
			Expect(r.status).To(Equal(http.StatusBadRequest))
			Expect(r.json()).To(Equal(map[string]any{"code": 550000.0, "description": "Duplicate cpi name 'c1'"}))
			r = post("/cpi_configs", "cpis: [{name: [x], type: warden}]\n")
			Expect(r.json()).To(Equal(map[string]any{"code": 40000.0,
				"description": `Property 'name' value (["x"]) did not match the required type 'String'`}))
			r = post("/cpi_configs", "cpis: [{name: c1}]\n")
			Expect(r.json()).To(HaveKeyWithValue("description", `Required property 'type' was not specified in object ({"name" => "c1"})`))
			Expect(c.getJSON("/cpi_configs?limit=5")).To(BeEmpty())

			expectCreated("/cpi_configs?name=ignored", "cpis: [{name: c1, type: warden}, {name: 2, type: warden}]\n")
			Expect(c.getJSON("/cpi_configs?limit=5")).To(HaveLen(1))
			Expect(c.getJSON("/configs?latest=true&type=cpi")).To(ConsistOf(HaveKeyWithValue("name", "default")))
			events := configEvents("cpi-config")
			Expect(events).To(HaveLen(5))
			Expect(events[0]).NotTo(HaveKey("object_name"))
			Expect(events[0]).NotTo(HaveKey("error"))
			Expect(events[1]).To(HaveKeyWithValue("error", ContainSubstring("'type'")))
		})
	})

	Describe("diff", func() {
		It("shows every line of a first config added, sections apart", func() {
			Expect(diff("/cpi_configs/diff", "cpis:\n- name: c1\n  type: warden\nextra: 1\n")).To(Equal([]any{
				[]any{"cpis:", "added"},
				[]any{"  - name: c1", "added"},
				[]any{"    type: warden", "added"},
				[]any{"", nil},
				[]any{"extra: 1", "added"},
			}))
		})

		It("shows a changed config's changed lines with the lines that hold them, and nothing for the same one", func() {
			Expect(diff("/cloud_configs/diff", cloudWithZ4)).To(Equal([]any{
				[]any{"azs:", nil},
				[]any{"  - name: z4", "added"},
				[]any{"    cloud_properties: {}", "added"},
			}))
			Expect(diff("/cloud_configs/diff?name=", sim.DefaultCloudConfig)).To(Equal([]any{}))
			changed := diff("/cloud_configs/diff", strings.Replace(sim.DefaultCloudConfig, "workers: 2", "workers: 3", 1))
			Expect(changed).To(Equal([]any{
				[]any{"compilation:", nil},
				[]any{"  workers: 2", "removed"},
				[]any{"  workers: 3", "added"},
			}))
			Expect(configCount()).To(Equal(1), "a diff stores nothing")
		})

		It("compares data, not the key order or layout of either side, as the Director compares hashes", func() {
			expectCreated("/cloud_configs?name=n", "azs:\n- name: z1\n  cloud_properties: {a: 1, b: 2} # a comment\n")
			Expect(diff("/cloud_configs/diff?name=n", "azs:\n- cloud_properties:\n    b: 2\n    a: 1\n  name: z1\n- name: z2\n")).To(Equal([]any{
				[]any{"azs:", nil},
				[]any{"  - name: z2", "added"},
			}))
		})

		It("diffs against the config of the name given", func() {
			Expect(diff("/cloud_configs/diff?name=other", "azs: []\n")).To(Equal([]any{[]any{"azs: []", "added"}}))
		})

		It("redacts properties in runtime and cpi diffs unless redact=false, never in cloud diffs", func() {
			expectCreated("/runtime_configs", "addons:\n- name: a\n  properties: {password: old}\n")
			body := "addons:\n- name: a\n  properties: {password: new}\n"
			Expect(diff("/runtime_configs/diff", body)).To(Equal([]any{
				[]any{"addons:", nil},
				[]any{"  - name: a", nil},
				[]any{"    properties:", nil},
				[]any{`      password: "<redacted>"`, "removed"},
				[]any{`      password: "<redacted>"`, "added"},
			}))
			Expect(diff("/runtime_configs/diff?redact=false", body)).To(ContainElement([]any{"      password: new", "added"}))
			Expect(diff("/cpi_configs/diff", "cpis: [{name: c, type: t, properties: {k: s}}]\n")).To(
				ContainElement([]any{`      k: "<redacted>"`, "added"}))
			Expect(diff("/cloud_configs/diff?name=x", "azs: [{name: z, cloud_properties: {k: s}}]\n")).To(
				ContainElement([]any{"      k: s", "added"}))
		})

		It("refuses what validate_manifest_yml refuses, without an event", func() {
			for _, body := range []string{"", "null\n", "a: [\n"} {
				r := post("/runtime_configs/diff", body)
				Expect(r.status).To(Equal(http.StatusBadRequest), body)
				Expect(r.json()).To(HaveKeyWithValue("code", 440001.0), body)
			}
			Expect(configEvents("runtime-config")).To(BeEmpty())
		})
	})

	Describe("GET /configs/:id", func() {
		It("answers a config with current computed, 440012 for an unknown or non-integer id", func() {
			one := c.getJSON("/configs/1").(map[string]any)
			Expect(one).To(Equal(map[string]any{"content": sim.DefaultCloudConfig, "id": "1", "type": "cloud",
				"name": "default", "team": nil, "created_at": one["created_at"], "current": true}))
			Expect(one["created_at"]).To(MatchRegexp(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$`))
			expectCreated("/cloud_configs", cloudWithZ4)
			Expect(c.getJSON("/configs/1")).To(HaveKeyWithValue("current", false))
			Expect(c.getJSON("/configs/2")).To(HaveKeyWithValue("current", true))
			for _, id := range []string{"999", "abc", "01", "-1"} {
				r := c.get("/configs/" + id)
				Expect(r.status).To(Equal(http.StatusNotFound), id)
				Expect(r.json()).To(Equal(map[string]any{"code": 440012.0, "description": "Config " + id + " not found"}))
			}
		})
	})

	It("needs the admin scope for GET /cpi_configs, the read scope for the other GETs", func() {
		d = start(sim.Options{Auth: sim.AuthUAA, ClientScopes: []string{"bosh.read"}, TokenTTL: time.Minute})
		rc := newClient(d).anonymous()
		rc.bearer = token(rc, "blacksmith", "secret")["access_token"].(string)
		Expect(rc.get("/cloud_configs?limit=1").status).To(Equal(http.StatusOK))
		Expect(rc.get("/configs/1").status).To(Equal(http.StatusOK))
		r := rc.get("/cpi_configs?limit=1")
		Expect(r.status).To(Equal(http.StatusUnauthorized))
		Expect(r.json()).To(HaveKeyWithValue("code", 600000.0))
		rc.contentType = "text/yaml"
		Expect(rc.do(http.MethodPost, "/cloud_configs", []byte("azs: []\n")).status).To(Equal(http.StatusUnauthorized))
	})
})

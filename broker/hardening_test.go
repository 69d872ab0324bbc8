package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

// goInternals matches what Go's own error texts show a platform user.
const goInternals = `Go struct|Go value|json: cannot|json: unknown|(?i)unmarshal|domain\.|reflect|\[\]uint8|map\[string\]`

// sampleEnv is a broker on the sample catalog, whose plans declare schemas.
func sampleEnv() *env {
	GinkgoHelper()
	c, err := catalog.Load("../manifests/catalog")
	Expect(err).NotTo(HaveOccurred())
	return newEnv(func(o *broker.Options) { o.Catalog = c })
}

// raw sends an authenticated request with a body as given.
func (e *env) raw(method, path string, body io.Reader, length int64) answer {
	GinkgoHelper()
	req, err := http.NewRequest(method, e.server.URL+path, body)
	Expect(err).NotTo(HaveOccurred())
	req.ContentLength = length
	req.SetBasicAuth(brokerUser, brokerPass)
	req.Header.Set("X-Broker-API-Version", apiVersion)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	a := answer{Status: res.StatusCode, Raw: string(data)}
	_ = json.Unmarshal(data, &a.Body)
	return a
}

// nothingHappened checks that no record and no Director task exist.
func (e *env) nothingHappened(id string) {
	GinkgoHelper()
	Expect(e.record(id)).To(BeNil(), "no record was written")
	Expect(e.director.Stats().Tasks).To(BeZero(), "nothing reached the Director")
}

var _ = Describe("parameters are data, never manifest text", func() {
	It("refuses the max_connections injection with 400 naming the parameter and the rule", func() {
		e := sampleEnv()
		body := map[string]any{"service_id": "postgresql", "plan_id": "postgresql-small",
			"organization_guid": "org", "space_guid": "space",
			"parameters": map[string]any{"max_connections": "100\n            hba_entries: [\"host all all 0.0.0.0/0 trust\"]"}}
		a := e.request("PUT", instancePath("pg-1")+"?accepts_incomplete=true", body)
		Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
		Expect(a.Body["description"]).To(And(ContainSubstring("max_connections"), ContainSubstring("integer")))
		e.nothingHappened("pg-1")
	})

	It("refuses BOSH's variable syntax in any parameter key or value, on provision, update and bind, naming it", func() {
		e := newEnv()
		for _, params := range []map[string]any{
			{"password": "((/dev-director/cf/cf_admin_password))"},
			{"nested": map[string]any{"list": []any{"ok", "x))"}}},
			{"((key))": 1},
		} {
			body := map[string]any{"service_id": "redis", "plan_id": "redis-large", "organization_guid": "o", "space_guid": "s",
				"parameters": params}
			a := e.request("PUT", instancePath("v-1")+"?accepts_incomplete=true", body)
			Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
			Expect(a.Body["description"]).To(ContainSubstring("BOSH's variable syntax"))
		}
		a := e.request("PUT", instancePath("v-1")+"?accepts_incomplete=true", map[string]any{"service_id": "redis",
			"plan_id": "redis-large", "organization_guid": "o", "space_guid": "s",
			"parameters": map[string]any{"nested": map[string]any{"list": []any{"ok", "x))"}}}})
		Expect(a.Body["description"]).To(ContainSubstring("parameter nested.list[1]"))
		e.nothingHappened("v-1")

		e.provisioned("v-2", "redis-large")
		upd := e.request("PATCH", instancePath("v-2")+"?accepts_incomplete=true", map[string]any{"service_id": "redis",
			"parameters": map[string]any{"maxmemory": "((maxmemory))"}})
		Expect(upd.Status).To(Equal(http.StatusBadRequest), upd.Raw)
		bind := e.request("PUT", instancePath("v-2")+"/service_bindings/b-1", map[string]any{"service_id": "redis",
			"plan_id": "redis-large", "parameters": map[string]any{"user": "((admin))"}})
		Expect(bind.Status).To(Equal(http.StatusBadRequest), bind.Raw)
	})

	It("refuses a parameter the plan does not declare, and one on a plan that takes none", func() {
		e := sampleEnv()
		body := map[string]any{"service_id": "redis", "plan_id": "redis-small", "organization_guid": "o", "space_guid": "s",
			"parameters": map[string]any{"addons": []any{map[string]any{"name": "evil"}}}}
		a := e.request("PUT", instancePath("r-1")+"?accepts_incomplete=true", body)
		Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("addons"))
		e.nothingHappened("r-1")

		e = newEnv()
		a = e.request("PUT", instancePath("m-1")+"?accepts_incomplete=true", map[string]any{"service_id": "memo", "plan_id": "memo-one",
			"organization_guid": "o", "space_guid": "s", "parameters": map[string]any{"x": 1}})
		Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("this plan takes no parameters on provision (got x)"))
		e.nothingHappened("m-1")
	})

	It("deploys a valid parameter where the template puts it, and nothing else", func() {
		e := sampleEnv()
		body := map[string]any{"service_id": "postgresql", "plan_id": "postgresql-small", "organization_guid": "o", "space_guid": "s",
			"parameters": map[string]any{"max_connections": 150, "database": "orders"}}
		a := e.request("PUT", instancePath("pg-2")+"?accepts_incomplete=true", body)
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		e.eventuallyState("pg-2", "succeeded")
		text, err := e.client.Manifest(context.Background(), "postgresql-small-pg-2")
		Expect(err).NotTo(HaveOccurred())
		var m struct {
			Properties     map[string]any
			InstanceGroups []struct {
				Jobs []struct{ Properties map[string]any }
			} `yaml:"instance_groups"`
		}
		Expect(yaml.Unmarshal([]byte(text), &m)).To(Succeed())
		dbs := m.InstanceGroups[0].Jobs[0].Properties["databases"].(map[string]any)
		Expect(dbs["max_connections"]).To(Equal(150))
		Expect(dbs["databases"]).To(Equal([]any{map[string]any{"name": "orders"}}))
		Expect(m.Properties).To(ConsistOf(HaveKey("parameters")), "only properties.blacksmith, no merged parameters")
		Expect(m.Properties).To(HaveKey("blacksmith"))
	})

	It("inserts a value of a plan that accepts any parameters as one YAML value, in the manifest the Director received", func() {
		e := newEnv()
		evil := "1\n  azs: [evil]\naddons:\n- name: evil"
		e.provision("any-1", "redis-small", map[string]any{"instances": evil})
		e.eventuallyState("any-1", "failed") // the Director refuses a string for instances; the structure stayed
		text, ok, err := e.store.Manifest(context.Background(), "any-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		var m map[string]any
		Expect(yaml.Unmarshal([]byte(text), &m)).To(Succeed())
		Expect(m).NotTo(HaveKey("addons"))
		group := m["instance_groups"].([]any)[0].(map[string]any)
		Expect(group["instances"]).To(Equal(evil))
		Expect(group["azs"]).To(Equal([]any{"z1"}))
	})

	It("answers 400 without Go internals when parameters do not fit the template", func() {
		listPlan := catalog.Plan{ID: "list-one", Name: "one", Description: "d", ServiceID: "list", AcceptAnyParameters: true,
			Manifest: mustTemplate("manifest.yml", "name: x\nthird: {{ index .Params.list 2 }}\n")}
		e := newEnv(func(o *broker.Options) {
			o.Catalog = &catalog.Catalog{Services: []catalog.Service{{ID: "list", Name: "list", Description: "d", Plans: []catalog.Plan{listPlan}}}}
		})
		a := e.request("PUT", instancePath("l-1")+"?accepts_incomplete=true", map[string]any{"service_id": "list", "plan_id": "list-one",
			"organization_guid": "o", "space_guid": "s", "parameters": map[string]any{"list": []any{1}}})
		Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("could not be applied to the plan's manifest template"))
		Expect(a.Raw).NotTo(MatchRegexp(goInternals))
		e.nothingHappened("l-1")
	})

	It("checks update and bind parameters too", func() {
		e := sampleEnv()
		body := map[string]any{"service_id": "redis", "plan_id": "redis-small", "organization_guid": "o", "space_guid": "s"}
		Expect(e.request("PUT", instancePath("r-2")+"?accepts_incomplete=true", body).Status).To(Equal(http.StatusAccepted))
		e.eventuallyState("r-2", "succeeded")
		a := e.request("PATCH", instancePath("r-2")+"?accepts_incomplete=true", map[string]any{"service_id": "redis",
			"parameters": map[string]any{"maxmemory": "lots"}})
		Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("maxmemory"))
		a = e.request("PUT", instancePath("r-2")+"/service_bindings/b-1", map[string]any{"service_id": "redis", "plan_id": "redis-small",
			"app_guid": "app", "parameters": map[string]any{"role": "admin"}})
		Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("role"))
		Expect(e.record("r-2").Parameters).To(BeEmpty(), "the refused update changed nothing")
	})

	It("advertises each plan's schemas in the catalog", func() {
		e := sampleEnv()
		a := e.request("GET", "/v2/catalog", nil)
		Expect(a.Status).To(Equal(http.StatusOK))
		var cat struct {
			Services []struct {
				Plans []struct {
					ID      string
					Schemas struct {
						ServiceInstance struct {
							Create struct{ Parameters map[string]any }
						} `json:"service_instance"`
					}
				}
			}
		}
		Expect(json.Unmarshal([]byte(a.Raw), &cat)).To(Succeed())
		found := false
		for _, s := range cat.Services {
			for _, p := range s.Plans {
				if p.ID == "postgresql-small" {
					found = true
					Expect(p.Schemas.ServiceInstance.Create.Parameters).To(HaveKeyWithValue("properties", HaveKey("max_connections")))
				}
			}
		}
		Expect(found).To(BeTrue())
	})
})

var _ = Describe("bounded requests", func() {
	var e *env
	BeforeEach(func() { e = newEnv() })

	It("answers 413 to a body over the bound, before reading it, and to a chunked one as soon as it passes the bound", func() {
		big := bytes.Repeat([]byte("x"), 5<<20)
		a := e.raw("PUT", instancePath("b-1")+"?accepts_incomplete=true", bytes.NewReader(big), int64(len(big)))
		Expect(a.Status).To(Equal(http.StatusRequestEntityTooLarge), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("at most 262144"))
		a = e.raw("PUT", instancePath("b-1")+"?accepts_incomplete=true", io.MultiReader(bytes.NewReader(big)), -1)
		Expect(a.Status).To(Equal(http.StatusRequestEntityTooLarge), a.Raw)
		e.nothingHappened("b-1")
	})

	DescribeTable("answers 400 naming what is wrong, with no Go internals",
		func(body, want string) {
			a := e.raw("PUT", instancePath("b-2")+"?accepts_incomplete=true", strings.NewReader(body), int64(len(body)))
			Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
			Expect(a.Body["description"]).To(ContainSubstring(want))
			Expect(a.Raw).NotTo(MatchRegexp(goInternals))
			e.nothingHappened("b-2")
		},
		Entry("malformed JSON", `{"service_id": "redis",`, "not valid JSON"),
		Entry("not an object", `["redis"]`, "must be a JSON object"),
		Entry("empty", ``, "empty"),
		Entry("a field of the wrong type", `{"service_id": 5, "plan_id": "redis-small"}`, "field service_id must be a string"),
		Entry("a nested field of the wrong type", `{"service_id": "redis", "plan_id": "redis-small", "maintenance_info": {"version": []}}`, "field maintenance_info.version must be a string"),
		Entry("parameters not an object", `{"service_id": "redis", "plan_id": "redis-small", "parameters": "x"}`, "parameters must be a JSON object"),
		Entry("parameters nested 5,000 deep", `{"service_id": "redis", "plan_id": "redis-small", "parameters": {"a":`+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+`}}`, "levels deep"),
		Entry("parameters nested 12 deep", `{"service_id": "redis", "plan_id": "redis-small", "parameters": {"a":`+strings.Repeat("[", 11)+strings.Repeat("]", 11)+`}}`, "parameters nest 12 levels deep; this broker accepts at most 10"),
		Entry("parameters over the bound", `{"service_id": "redis", "plan_id": "redis-small", "parameters": {"a": "`+strings.Repeat("x", 17<<10)+`"}}`, "this broker accepts at most 16384"),
		Entry("a long organization guid", `{"service_id": "redis", "plan_id": "redis-small", "organization_guid": "`+strings.Repeat("o", 300)+`"}`, "field organization_guid is 300 characters"),
		Entry("a control character in a guid", `{"service_id": "redis", "plan_id": "redis-small", "space_guid": "a\nb"}`, "field space_guid holds control characters"),
	)

	It("refuses ids over the length bound (a 10,240-character id was taken before)", func() {
		for _, id := range []string{strings.Repeat("a", 65), strings.Repeat("a", 10240)} {
			a := e.request("PUT", instancePath(id)+"?accepts_incomplete=true", provisionBody("redis-small", nil))
			Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
			Expect(a.Body["description"]).To(ContainSubstring("instance id is"))
		}
		e.provision(strings.Repeat("a", 64), "redis-small", nil)
	})

	It("takes its bounds from the options", func() {
		e = newEnv(func(o *broker.Options) { o.Limits = broker.Limits{MaxBodyBytes: 1000, MaxIDLength: 8} })
		a := e.request("PUT", instancePath("123456789")+"?accepts_incomplete=true", provisionBody("redis-small", nil))
		Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
		a = e.request("PUT", instancePath("12345678")+"?accepts_incomplete=true", provisionBody("redis-small", map[string]any{"a": strings.Repeat("x", 1000)}))
		Expect(a.Status).To(Equal(http.StatusRequestEntityTooLarge), a.Raw)
	})
})

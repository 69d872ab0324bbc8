package sim_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("POST /deployments/:name/diff, as bosh deploy asks before it deploys", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: 10 * time.Millisecond})
		c = newClient(d)
	})
	diff := func(name, manifest, query string) map[string]any {
		r := c.do(http.MethodPost, "/deployments/"+name+"/diff"+query, []byte(manifest))
		Expect(r.status).To(Equal(http.StatusOK), "always 200: %s", r.body)
		return r.json().(map[string]any)
	}
	lines := func(a map[string]any, status any) []string {
		var out []string
		for _, l := range a["diff"].([]any) {
			if l.([]any)[1] == status {
				out = append(out, l.([]any)[0].(string))
			}
		}
		return out
	}

	It("shows a new deployment whole, with the cloud config's keys, and the configs it was made against", func() {
		a := diff("r1", redisManifest("r1", "16.1.0"), "")
		Expect(a["context"]).To(Equal(map[string]any{"cloud_config_ids": []any{1.0}, "runtime_config_ids": []any{}}))
		Expect(lines(a, nil)).To(HaveEach(""), "only section breaks are unchanged")
		added := lines(a, "added")
		Expect(added[0]).To(Equal("azs:"), "the cloud config's sections come first")
		Expect(added).To(ContainElements("name: r1", "instance_groups:", "networks:", "releases:"))
	})

	It("shows nothing for an unchanged manifest", func() {
		Expect(c.waitTask(c.deploy(redisManifest("r1", "16.1.0")))["state"]).To(Equal("done"))
		Expect(diff("r1", redisManifest("r1", "16.1.0"), "")["diff"]).To(BeEmpty())
	})

	It("shows a changed manifest's removed and added lines under the lines that hold them, redacting properties", func() {
		withProps := strings.Replace(redisManifest("r1", "16.1.0"), "    release: redis\n  vm_type: small\n  persistent",
			"    release: redis\n    properties: {password: old}\n  vm_type: small\n  persistent", 1)
		Expect(c.waitTask(c.deploy(withProps))["state"]).To(Equal("done"))
		changed := strings.Replace(strings.Replace(withProps, "version: 16.1.0", "version: 16.2.0", 1), "password: old", "password: new", 1)
		a := diff("r1", changed, "")
		Expect(a["diff"]).To(ContainElements(
			[]any{"releases:", nil}, []any{"    version: 16.1.0", "removed"}, []any{"    version: 16.2.0", "added"}))
		Expect(lines(a, "removed")).To(ContainElement(ContainSubstring(`"<redacted>"`)))
		Expect(lines(a, "added")).NotTo(ContainElement(ContainSubstring("new")))
		Expect(lines(diff("r1", changed, "?redact=false"), "added")).To(ContainElement(ContainSubstring("password: new")))
	})

	It("answers a manifest it cannot read with an empty diff and the error, without context", func() {
		a := diff("r1", "", "")
		Expect(a).To(Equal(map[string]any{"diff": []any{}, "error": "Unable to diff manifest: Manifest should not be empty"}))
		Expect(diff("r1", "- a list\n", "")["error"]).To(Equal("Unable to diff manifest: Manifest should be a hash"))
	})

	It("takes the context back with the deploy, refusing config ids that do not exist", func() {
		ctx, err := json.Marshal(diff("r1", redisManifest("r1", "16.1.0"), "")["context"])
		Expect(err).NotTo(HaveOccurred())
		r := c.do(http.MethodPost, "/deployments?context="+url.QueryEscape(string(ctx)), []byte(redisManifest("r1", "16.1.0")))
		Expect(r.status).To(Equal(http.StatusFound))
		r = c.do(http.MethodPost, "/deployments?context="+url.QueryEscape(`{"cloud_config_ids":[99]}`), []byte(redisManifest("r1", "16.1.0")))
		Expect(r.status).To(Equal(http.StatusBadRequest))
		Expect(r.json()).To(Equal(map[string]any{"code": 190025.0, "description": "Context includes invalid config ID"}))
	})
})

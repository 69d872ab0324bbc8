package sim_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("releases and stemcells a deploy needs uploaded (Options.Releases, Options.Stemcells)", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: 10 * time.Millisecond,
			Releases: []string{"redis/16.1.0", "redis/16.0.0"}, Stemcells: []string{"ubuntu-jammy/1.506"}})
		c = newClient(d)
	})
	failure := func(manifest string) (map[string]any, []any) {
		GinkgoHelper()
		id := c.deploy(manifest)
		t := c.waitTask(id)
		Expect(t["state"]).To(Equal("error"))
		return t, ndjson(c.get("/tasks/" + itoa(id) + "/output?type=event").body)
	}

	It("deploys what was uploaded, and lists uploads not deployed", func() {
		Expect(c.waitTask(c.deploy(redisManifest("r1", "16.1.0")))["state"]).To(Equal("done"))
		releases := c.getJSON("/releases").([]any)
		Expect(releases).To(ConsistOf(HaveKeyWithValue("release_versions", ConsistOf(
			And(HaveKeyWithValue("version", "16.0.0"), HaveKeyWithValue("currently_deployed", false)),
			And(HaveKeyWithValue("version", "16.1.0"), HaveKeyWithValue("currently_deployed", true))))))
	})

	It("refuses a release or a release version not uploaded before any stage, as the Director's planner does", func() {
		t, lines := failure(redisManifest("r1", "99"))
		Expect(t["result"]).To(Equal("Release version 'redis/99' doesn't exist"))
		Expect(lines).To(ConsistOf(HaveKeyWithValue("error", map[string]any{"code": 30006.0, "message": t["result"]})))
		t, _ = failure(strings.ReplaceAll(redisManifest("r2", "1"), "redis", "valkey"))
		Expect(t["result"]).To(Equal("Release 'valkey' doesn't exist"))
	})

	It("takes latest as the newest version uploaded", func() {
		d.UploadRelease("redis", "16.2.0")
		Expect(c.waitTask(c.deploy(redisManifest("r1", "latest")))["state"]).To(Equal("done"))
		Expect(c.getJSON("/deployments")).To(ContainElement(HaveKeyWithValue("releases",
			[]any{map[string]any{"name": "redis", "version": "16.2.0"}})))
		t, _ := failure(strings.Replace(redisManifest("r2", "16.1.0"), `os: ubuntu-jammy
  version: "1.506"`, `os: ubuntu-noble
  version: latest`, 1))
		Expect(t["result"]).To(Equal("Stemcell with Operating System 'ubuntu-noble' doesn't exist"))
	})

	It("fails a stemcell version not uploaded in Preparing deployment, with the stage's error", func() {
		t, lines := failure(strings.Replace(redisManifest("r1", "16.1.0"), `version: "1.506"`, `version: "1.123"`, 1))
		Expect(t["result"]).To(Equal("Stemcell version '1.123' for OS 'ubuntu-jammy' doesn't exist"))
		Expect(lines).To(HaveLen(3))
		Expect(lines[1]).To(And(HaveKeyWithValue("stage", "Preparing deployment"), HaveKeyWithValue("state", "failed"),
			HaveKeyWithValue("data", map[string]any{"error": t["result"]})))
		Expect(lines[2]).To(HaveKeyWithValue("error", HaveKeyWithValue("code", 50003.0)))
	})

	It("counts what seeds and out-of-band changes bring as uploaded, and refuses malformed uploads", func() {
		names := d.SeedDeployments(1, []sim.SeedPlan{{PlanID: "p", Release: "kafka", Version: "3.0.0"}})
		manifest := c.getJSON("/deployments/" + names[0]).(map[string]any)["manifest"].(string)
		Expect(c.waitTask(c.deploy(manifest))["state"]).To(Equal("done"))
		_, err := sim.New(sim.Options{Releases: []string{"redis"}})
		Expect(err).To(MatchError(sim.ErrBadOptions))
		Expect(err).To(MatchError(ContainSubstring(`release "redis" is not NAME/VERSION`)))
	})
})

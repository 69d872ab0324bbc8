package sim_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("deploys checked against the cloud config", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: 10 * time.Millisecond})
		c = newClient(d)
	})

	DescribeTable("fail the task with the Director's error, before any stage, leaving a new deployment without manifest",
		func(from, to string, code float64, message string) {
			manifest := strings.Replace(redisManifest("r1", "16.1.0"), from, to, 1)
			Expect(manifest).NotTo(Equal(redisManifest("r1", "16.1.0")))
			id := c.deploy(manifest)
			t := c.waitTask(id)
			Expect(t["state"]).To(Equal("error"))
			Expect(t["result"]).To(Equal(message))
			Expect(ndjson(c.get("/tasks/" + itoa(id) + "/output?type=event").body)).To(ConsistOf(
				And(HaveKeyWithValue("error", map[string]any{"code": code, "message": message}), HaveKey("time"))))
			Expect(c.getJSON("/deployments/r1")).To(Equal(map[string]any{"manifest": ""}))
		},
		Entry("an az no network covers", "azs: [z1]", "azs: [z9]", 150006.0,
			"Instance group 'redis' must specify availability zone that matches availability zones of network 'services'"),
		Entry("a vm_type", "vm_type: small\n  persistent", "vm_type: huge\n  persistent", 140004.0,
			"Instance group 'redis' references an unknown vm type 'huge'"),
		Entry("a network", "  - name: services\n- name: smoke", "  - name: private\n- name: smoke", 150001.0,
			"Instance group 'redis' references an unknown network 'private'"),
		Entry("a disk type", "persistent_disk_type: default", "persistent_disk_type: ssd", 140012.0,
			"Instance group 'redis' references an unknown disk type 'ssd'"),
		Entry("a vm_extension", "vm_type: small\n  persistent", "vm_type: small\n  vm_extensions: [public-lbs]\n  persistent", 100.0,
			"The vm_extension 'public-lbs' has not been configured in cloud-config."),
		Entry("no network", "  networks:\n  - name: services\n- name: smoke", "  networks: []\n- name: smoke", 140009.0,
			"Instance group 'redis' must specify at least one network"),
	)

	It("takes an az a network without azs reaches only if the cloud config declares it", func() {
		d.SetCloudConfig(strings.Replace(sim.DefaultCloudConfig, "compilation:", "- name: vip\n  type: vip\ncompilation:", 1))
		manifest := strings.Replace(strings.Replace(redisManifest("r1", "16.1.0"), "azs: [z1]", "azs: [z9]", 1),
			"  - name: services\n- name: smoke", "  - name: vip\n- name: smoke", 1)
		t := c.waitTask(c.deploy(manifest))
		Expect(t["result"]).To(Equal("Instance group 'redis' references unknown availability zone 'z9'"))
	})

	It("checks against the cloud config current when the task runs, and accepts the default one's names", func() {
		Expect(c.waitTask(c.deploy(redisManifest("r1", "16.1.0")))["state"]).To(Equal("done"))
		d.SetCloudConfig("azs: [{name: z1}]\n")
		t := c.waitTask(c.deploy(redisManifest("r1", "16.1.1")))
		Expect(t["result"]).To(Equal("Instance group 'redis' references an unknown disk type 'default'"))
	})

	It("cuts a long error in the task's result as the Director does, and keeps it whole in the event output", func() {
		long := strings.Repeat("x", 200)
		id := c.deploy(strings.Replace(redisManifest("r1", "16.1.0"), "vm_type: small\n  persistent", "vm_type: "+long+"\n  persistent", 1))
		t := c.waitTask(id)
		Expect(t["result"]).To(Equal("Instance group 'redis' references an unknown vm type..."), "cut at 128 characters, at a word")
		lines := ndjson(c.get("/tasks/" + itoa(id) + "/output?type=event").body)
		Expect(ev(lines[0])["error"]).To(HaveKeyWithValue("message", HaveSuffix(long+"'")))
	})

	It("writes a failed stage's error in its data, the code on the last line only", func() {
		d.FailNextTask("r1")
		id := c.deploy(redisManifest("r1", "16.1.0"))
		t := c.waitTask(id)
		lines := ndjson(c.get("/tasks/" + itoa(id) + "/output?type=event").body)
		failed := ev(lines[len(lines)-2])
		Expect(failed).To(And(HaveKeyWithValue("state", "failed"), HaveKeyWithValue("data", map[string]any{"error": t["result"]})))
		Expect(failed).NotTo(HaveKey("error"))
		Expect(ev(lines[len(lines)-1])["error"]).To(Equal(map[string]any{"code": 400007.0, "message": t["result"]}))
	})
})

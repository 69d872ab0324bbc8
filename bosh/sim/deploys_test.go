package sim_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("what a deploy changes, as the Director plans it", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: 10 * time.Millisecond})
		c = newClient(d)
	})
	stagesOf := func(id int) []string {
		var out []string
		for _, l := range ndjson(c.get("/tasks/" + itoa(id) + "/output?type=event").body) {
			if ev(l)["state"] == "started" {
				out = append(out, ev(l)["stage"].(string))
			}
		}
		return out
	}
	instanceEvents := func(id int) []string {
		var out []string
		for _, e := range c.getJSON("/events?task=" + itoa(id)).([]any) {
			if t := ev(e)["object_type"]; t == "instance" || t == "vm" {
				name, _ := ev(e)["object_name"].(string)
				out = append(out, ev(e)["action"].(string)+" "+t.(string)+" "+uuidRE.ReplaceAllString(name, "ID"))
			}
		}
		return out
	}

	It("creates the VMs of a new deployment, then updates them, recording the instances' and VMs' creation", func() {
		id := c.deploy(twoRedis("r1"))
		Expect(c.waitTask(id)["state"]).To(Equal("done"))
		Expect(stagesOf(id)).To(Equal([]string{"Preparing deployment", "Preparing deployment", "Preparing package compilation",
			"Creating missing vms", "Creating missing vms", "Updating instance", "Updating instance"}))
		Expect(instanceEvents(id)).To(ConsistOf("create instance redis/ID", "create instance redis/ID",
			"create instance redis/ID", "create instance redis/ID", "create vm vm-ID", "create vm vm-ID", "create vm ", "create vm "))
	})

	It("updates nothing for an unchanged manifest, and every VM for a changed one", func() {
		c.waitTask(c.deploy(twoRedis("r1")))
		same := c.deploy(twoRedis("r1"))
		Expect(c.waitTask(same)["state"]).To(Equal("done"))
		Expect(stagesOf(same)).To(Equal([]string{"Preparing deployment", "Preparing deployment", "Preparing package compilation"}))
		Expect(instanceEvents(same)).To(BeEmpty())

		changed := c.deploy(strings.Replace(twoRedis("r1"), "16.1.0", "16.2.0", 1))
		c.waitTask(changed)
		Expect(stagesOf(changed)).To(HaveLen(5))
		Expect(instanceEvents(changed)).To(ConsistOf("update instance redis/ID", "update instance redis/ID",
			"update instance redis/ID", "update instance redis/ID"))
	})

	It("deletes the instances a smaller manifest drops, with their VMs", func() {
		c.waitTask(c.deploy(twoRedis("r1")))
		dropped := d.InstanceIDs("r1", "redis")[1]
		id := c.deploy(redisManifest("r1", "16.1.0")) // one redis instance
		c.waitTask(id)
		Expect(stagesOf(id)).To(ContainElement("Deleting unneeded instances"))
		Expect(instanceEvents(id)).To(ContainElements("delete instance redis/ID", "delete vm vm-ID"))
		Expect(d.InstanceIDs("r1", "redis")).NotTo(ContainElement(dropped))
	})
})

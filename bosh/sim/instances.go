package sim

import (
	"crypto/sha1"
	"fmt"
	"strconv"
	"time"
)

// instance is an instance of a deployment, derived from its manifest: the
// same deployment, group and index always give the same ids.
type instance struct {
	job, id, agentID, cid, az string
	index                     int
	ips                       []string
	expectsVM, bootstrap      bool
	group                     *group
	createdAt                 time.Time
}

// instancesOf lists the instances of a deployment's content, VMs created at
// created.
func instancesOf(deployment string, c *content, created time.Time) []instance {
	if c == nil {
		return nil
	}
	var out []instance
	for gi := range c.groups {
		g := &c.groups[gi]
		for i := range g.instances {
			out = append(out, newInstance(deployment, g, i, created))
		}
	}
	return out
}

// vmInstances are the instances that have a VM (errands have none).
func vmInstances(deployment string, c *content, created time.Time) []instance {
	var out []instance
	for _, in := range instancesOf(deployment, c, created) {
		if in.expectsVM {
			out = append(out, in)
		}
	}
	return out
}

func newInstance(deployment string, g *group, i int, created time.Time) instance {
	key := []string{deployment, g.name, strconv.Itoa(i)}
	in := instance{job: g.name, index: i, id: stableUUID(append(key, "id")...), az: "z1",
		expectsVM: !g.errand, bootstrap: i == 0, group: g, createdAt: created, ips: []string{}}
	if len(g.azs) > 0 {
		in.az = g.azs[i%len(g.azs)]
	}
	if in.expectsVM {
		in.agentID = stableUUID(append(key, "agent")...)
		in.cid = "vm-" + stableUUID(append(key, "vm")...)
		in.ips = []string{instanceIP(g, key, i)}
	}
	return in
}

// instanceIP is a static IP from the manifest, or else a loopback address
// (127.64.0.0/10): nothing that takes an address from the simulator can
// reach a real host with it.
func instanceIP(g *group, key []string, i int) string {
	if i < len(g.staticIPs) {
		return g.staticIPs[i]
	}
	h := sha1.Sum(fmt.Appendf(nil, "%v", key))
	return fmt.Sprintf("127.%d.%d.%d", 64+h[0]%64, h[1], 2+h[2]%252)
}

func (in instance) createdAtText() string { return in.createdAt.Format(time.RFC3339) }

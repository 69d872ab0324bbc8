package sim

import (
	"crypto/sha1"
	"fmt"
	"strconv"
	"time"
)

// Instance states, as the Director keeps them (the desired state of an
// instance): a stopped instance keeps its VM with its jobs stopped, a
// detached one has none.
const (
	instStarted  = "started"
	instStopped  = "stopped"
	instDetached = "detached"
)

// Agent answers a simulated VM's agent gives; see SetAgent.
const (
	AgentRunning      = "running"            // every process running
	AgentFailing      = "failing"            // a process is not running
	AgentUnresponsive = "unresponsive agent" // the agent does not answer in time
)

// instState is what happened to an instance since its deployment was
// created: its desired state, how many times its VM was recreated and when,
// and how its agent answers. An instance with none is started, on its first
// VM, created with the deployment, and healthy.
type instState struct {
	state string    // instStarted, instStopped or instDetached; "" = started
	gen   int       // VM generation: 0 for the first VM, +1 at each recreation
	vmAt  time.Time // when its current VM was created; zero = the deployment's
	agent string    // AgentRunning (""), AgentFailing or AgentUnresponsive
	kept  bool      // an errand instance whose VM a run kept alive (keep_alive)
}

// instance is an instance of a deployment, derived from its manifest and
// its instState: the same deployment, group, index and generation always
// give the same ids.
type instance struct {
	job, id, agentID, cid, az string
	index                     int
	ips                       []string
	expectsVM, bootstrap      bool
	group                     *group
	createdAt                 time.Time
	state, agent              string
}

// instancesOf lists the instances of a deployment.
func instancesOf(dep *deployment) []instance {
	if dep == nil || dep.content == nil {
		return nil
	}
	var out []instance
	for gi := range dep.content.groups {
		g := &dep.content.groups[gi]
		for i := range g.instances {
			out = append(out, newInstance(dep, g, i))
		}
	}
	return out
}

// vmInstances are the instances that have a VM (errands, but those a run
// kept alive, and detached instances have none).
func vmInstances(dep *deployment) []instance {
	var out []instance
	for _, in := range instancesOf(dep) {
		if in.expectsVM {
			out = append(out, in)
		}
	}
	return out
}

// instanceID is the id of a deployment's instance of group g at index i.
func instanceID(deployment, group string, i int) string {
	return stableUUID(deployment, group, strconv.Itoa(i), "id")
}

func newInstance(dep *deployment, g *group, i int) instance {
	key := []string{dep.name, g.name, strconv.Itoa(i)}
	in := instance{job: g.name, index: i, id: instanceID(dep.name, g.name, i), az: "z1", bootstrap: i == 0,
		group: g, createdAt: dep.createdAt, ips: []string{}, state: instStarted, agent: AgentRunning}
	if len(g.azs) > 0 {
		in.az = g.azs[i%len(g.azs)]
	}
	gen, kept := "", false
	if st := dep.inst[in.id]; st != nil {
		kept = st.kept
		in.state, in.agent = or(st.state, instStarted), or(st.agent, AgentRunning)
		if st.gen > 0 {
			gen = strconv.Itoa(st.gen)
		}
		if !st.vmAt.IsZero() {
			in.createdAt = st.vmAt
		}
	}
	in.expectsVM = (!g.errand || kept) && in.state != instDetached
	if in.expectsVM {
		in.agentID = stableUUID(append(key, "agent"+gen)...)
		in.cid = "vm-" + stableUUID(append(key, "vm"+gen)...)
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

// name is the instance as events and task stages name it: group/uuid.
func (in instance) name() string { return in.job + "/" + in.id }

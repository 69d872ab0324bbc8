package sim

import (
	"net/http"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// vmView is a VM as GET /deployments/:name/vms shows it.
type vmView struct {
	AgentID                  string   `json:"agent_id"`
	CID                      string   `json:"cid"`
	Job                      string   `json:"job"`
	Index                    int      `json:"index"`
	ID                       string   `json:"id"`
	AZ                       string   `json:"az"`
	IPs                      []string `json:"ips"`
	VMCreatedAt              string   `json:"vm_created_at"`
	Active                   bool     `json:"active"`
	PermanentNatsCredentials bool     `json:"permanent_nats_credentials"`
}

// instanceView is an instance as GET /deployments/:name/instances shows it.
type instanceView struct {
	AgentID     *string  `json:"agent_id"`
	CID         *string  `json:"cid"`
	Job         string   `json:"job"`
	Index       int      `json:"index"`
	ID          string   `json:"id"`
	AZ          string   `json:"az"`
	IPs         []string `json:"ips"`
	VMCreatedAt *string  `json:"vm_created_at"`
	ExpectsVM   bool     `json:"expects_vm"`
}

// vms answers what GET /deployments/:name/vms and /instances show of a
// deployment's instances, and changes their states
// (PUT /deployments/:name/jobs/...) through tasks.
type vms struct {
	db      *store
	deploys *deploys
	board   *taskBoard
	runner  *runner
}

// deploymentInstances reads a deployment's instances; false when it does
// not exist.
func (v *vms) deploymentInstances(name string, vmsOnly bool) ([]instance, bool) {
	v.db.mu.RLock()
	defer v.db.mu.RUnlock()
	dep, ok := v.db.deployments[name]
	if !ok {
		return nil, false
	}
	if vmsOnly {
		return vmInstances(dep), true
	}
	return instancesOf(dep), true
}

// getVMs is GET /deployments/:name/vms; with format=full it starts a task
// that "contacts every agent" and writes one VM a line to its result.
func (v *vms) getVMs(w http.ResponseWriter, r *http.Request, user string) {
	name := r.PathValue("name")
	if r.URL.Query().Get("format") == "full" {
		v.vmStateTask(w, r, user, name, false)
		return
	}
	vms, ok := v.deploymentInstances(name, true)
	if !ok {
		deploymentNotFound(w, name)
		return
	}
	out := make([]vmView, len(vms))
	for i, in := range vms {
		out[i] = vmView{AgentID: in.agentID, CID: in.cid, Job: in.job, Index: in.index, ID: in.id, AZ: in.az,
			IPs: in.ips, VMCreatedAt: in.createdAtText(), Active: true, PermanentNatsCredentials: true}
	}
	writeJSON(w, http.StatusOK, out)
}

// getInstances is GET /deployments/:name/instances; with format=full it
// starts the same task as /vms?format=full, which lists every instance,
// those without a VM included (jobs/vm_state.rb, instance_states).
func (v *vms) getInstances(w http.ResponseWriter, r *http.Request, user string) {
	name := r.PathValue("name")
	if r.URL.Query().Get("format") == "full" {
		v.vmStateTask(w, r, user, name, true)
		return
	}
	all, ok := v.deploymentInstances(name, false)
	if !ok {
		deploymentNotFound(w, name)
		return
	}
	out := make([]instanceView, len(all))
	for i, in := range all {
		out[i] = instanceView{Job: in.job, Index: in.index, ID: in.id, AZ: in.az, IPs: in.ips, ExpectsVM: in.expectsVM}
		if in.expectsVM {
			created := in.createdAtText()
			out[i].AgentID, out[i].CID, out[i].VMCreatedAt = &in.agentID, &in.cid, &created
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// vmStateTask starts the vm-state task of ?format=full, which lists the
// VMs (or with instances every instance) in its result.
func (v *vms) vmStateTask(w http.ResponseWriter, r *http.Request, user, name string, instances bool) {
	v.db.mu.Lock()
	if _, ok := v.db.deployments[name]; !ok {
		v.db.mu.Unlock()
		deploymentNotFound(w, name)
		return
	}
	t := v.board.newTaskLocked(kindVMState, "retrieve vm-stats", name, user, r.Header.Get("X-Bosh-Context-Id"))
	t.instances = instances
	v.db.mu.Unlock()
	v.runner.startTask(t)
	v.board.redirectToTask(w, t.id)
}

// vmStateLines is the result output of a vm-state task of dep: one line a
// VM, or with instances one line an instance, VM or not; nil when dep is.
func vmStateLines(dep *deployment, instances bool) []byte {
	if dep == nil {
		return nil
	}
	list := vmInstances(dep)
	if instances {
		list = instancesOf(dep)
	}
	var out []byte
	now := time.Now()
	for _, in := range list {
		out = append(append(out, simkit.JSON(fullVMOf(in, now))...), '\n')
	}
	return out
}

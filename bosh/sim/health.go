package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// HMUser is the user of what the simulated Health Monitor records: its
// alerts and its resurrections (the Director's hm account).
const HMUser = "hm"

// ErrNoInstance matches a knob naming an instance the deployment lacks.
var ErrNoInstance = errors.New("no such instance")

// ErrClosed matches a knob that met the Director closing.
var ErrClosed = errors.New("the Director simulator is closed")

// ErrBadAgent matches an agent answer SetAgent does not know.
var ErrBadAgent = errors.New("not an agent answer")

// health is what the Health Monitor sees and does: the answers of the
// instances' agents, its alerts, and its resurrections through "scan and
// fix" tasks (PUT /deployments/:name/scan_and_fix).
type health struct {
	db      *store
	ctx     context.Context // ends when the Director closes
	rec     *recorder
	deploys *deploys
	board   *taskBoard
	runner  *runner
}

// setAgent makes an instance's agent answer as agent says
// (Director.SetAgent), recording the Health Monitor's alert when it stops
// answering.
func (h *health) setAgent(deployment, instanceID, agent string) error {
	if agent != AgentRunning && agent != AgentFailing && agent != AgentUnresponsive {
		return fmt.Errorf("setting the agent of %s/%s to %q: %w", deployment, instanceID, agent, ErrBadAgent)
	}
	h.db.mu.Lock()
	defer h.db.mu.Unlock()
	st, in, err := h.instStateLocked(deployment, instanceID)
	if err != nil {
		return err
	}
	if agent == AgentUnresponsive && in.agent != AgentUnresponsive {
		h.rec.recordLocked(alertEvent(deployment, in, time.Now().UTC()))
	}
	st.agent = agent
	if agent == AgentRunning {
		st.agent = ""
	}
	return nil
}

// instStateLocked finds a deployment's instance with a VM and the state it
// keeps, created when it has none yet.
func (h *health) instStateLocked(deployment, instanceID string) (*instState, instance, error) {
	dep := h.db.deployments[deployment]
	if dep == nil {
		return nil, instance{}, fmt.Errorf("deployment %q: %w", deployment, ErrNoInstance)
	}
	for _, in := range vmInstances(dep) {
		if in.id != instanceID {
			continue
		}
		if dep.inst == nil {
			dep.inst = map[string]*instState{}
		}
		st := dep.inst[in.id]
		if st == nil {
			st = &instState{}
			dep.inst[in.id] = st
		}
		return st, in, nil
	}
	return nil, instance{}, fmt.Errorf("instance %s of deployment %q (with a VM): %w", instanceID, deployment, ErrNoInstance)
}

// alertEvent is the Health Monitor's event for an agent that timed out
// (bosh-monitor's event_logger plugin: object_name the alert's id, the
// alert's title, time and severity in its context).
func alertEvent(deployment string, in instance, at time.Time) event {
	title := in.agentID + " has timed out"
	msg := fmt.Sprintf("%s. Alert @ %s, severity 2: %s", title, at.Format("2006-01-02 15:04:05 UTC"), title)
	return event{user: HMUser, action: "create", objectType: "alert", objectName: newUUID(),
		deployment: deployment, instance: in.name(), context: simkit.JSON(map[string]string{"message": msg})}
}

// instanceIDs lists the ids of a deployment's instances of group ("" =
// every group), in the order of its manifest (Director.InstanceIDs).
func (h *health) instanceIDs(deployment, group string) []string {
	h.db.mu.RLock()
	defer h.db.mu.RUnlock()
	var out []string
	for _, in := range instancesOf(h.db.deployments[deployment]) {
		if group == "" || in.job == group {
			out = append(out, in.id)
		}
	}
	return out
}

// resurrect recreates an instance's VM through a "scan and fix" task by
// user hm and returns once it ended (Director.Resurrect).
func (h *health) resurrect(deployment, instanceID string) error {
	h.db.mu.Lock()
	if h.ctx.Err() != nil {
		h.db.mu.Unlock()
		return fmt.Errorf("resurrecting %s/%s: %w", deployment, instanceID, ErrClosed)
	}
	if _, _, err := h.instStateLocked(deployment, instanceID); err != nil {
		h.db.mu.Unlock()
		return fmt.Errorf("resurrecting: %w", err)
	}
	t := h.scanAndFixLocked(deployment, HMUser, "", map[string]bool{instanceID: true})
	done := make(chan struct{})
	t.done = done
	h.db.mu.Unlock()
	h.runner.startTask(t)
	select {
	case <-done:
	case <-h.ctx.Done():
		return fmt.Errorf("resurrecting %s/%s: %w", deployment, instanceID, ErrClosed)
	}
	h.db.mu.RLock()
	defer h.db.mu.RUnlock()
	if t.state != StateDone {
		return fmt.Errorf("resurrecting %s/%s: task %d %s: %s", deployment, instanceID, t.id, t.state, *t.result)
	}
	return nil
}

// scanAndFixLocked records a queued "scan and fix" task recreating the VMs
// of ids; the caller starts it.
func (h *health) scanAndFixLocked(deployment, user, ctxID string, ids map[string]bool) *task {
	t := h.board.newTaskLocked(kindScanFix, "scan and fix", deployment, user, ctxID)
	t.target = &jobTarget{group: "*", state: "recreate", ids: ids}
	return t
}

// putScanAndFix is PUT /deployments/:name/scan_and_fix (application/json,
// {"jobs": {"group": ["uuid", ...]}}), as the Health Monitor's resurrector
// sends it: a "scan and fix" task recreating those instances' VMs.
func (h *health) putScanAndFix(w http.ResponseWriter, r *http.Request, user string) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		endpointNotFound(w, r)
		return
	}
	var body struct {
		Jobs map[string][]string `json:"jobs"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, codeValidationType, "Invalid JSON request body: %v", err)
		return
	}
	name := r.PathValue("name")
	h.db.mu.Lock()
	if _, ok := h.deploys.deploymentLocked(w, name); !ok {
		h.db.mu.Unlock()
		return
	}
	ids := map[string]bool{}
	for _, list := range body.Jobs {
		for _, id := range list {
			ids[id] = true
		}
	}
	t := h.scanAndFixLocked(name, user, r.Header.Get("X-Bosh-Context-Id"), ids)
	h.db.mu.Unlock()
	h.runner.startTask(t)
	h.board.redirectToTask(w, t.id)
}

package sim

import (
	"errors"
	"fmt"
	"time"
)

// HMUser is the user of what the simulated Health Monitor records: its
// alerts and its resurrections (the Director's hm account).
const HMUser = "hm"

// ErrNoInstance matches a knob naming an instance the deployment lacks.
var ErrNoInstance = errors.New("no such instance")

// ErrBadAgent matches an agent answer SetAgent does not know.
var ErrBadAgent = errors.New("not an agent answer")

// SetAgent makes an instance's agent answer as agent says (AgentRunning,
// AgentFailing or AgentUnresponsive), as a VM whose process dies or whose
// agent stops answering would, with no task. An agent that stops answering
// makes the Health Monitor post its alert event (user hm, object_type
// alert, the instance named), as its event_logger plugin does.
func (d *Director) SetAgent(deployment, instanceID, agent string) error {
	if agent != AgentRunning && agent != AgentFailing && agent != AgentUnresponsive {
		return fmt.Errorf("setting the agent of %s/%s to %q: %w", deployment, instanceID, agent, ErrBadAgent)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	st, in, err := d.instStateLocked(deployment, instanceID)
	if err != nil {
		return err
	}
	if agent == AgentUnresponsive && in.agent != AgentUnresponsive {
		d.recordLocked(alertEvent(deployment, in, time.Now().UTC()))
	}
	st.agent = agent
	if agent == AgentRunning {
		st.agent = ""
	}
	return nil
}

// instStateLocked finds a deployment's instance with a VM and the state it
// keeps, created when it has none yet.
func (d *Director) instStateLocked(deployment, instanceID string) (*instState, instance, error) {
	dep := d.deployments[deployment]
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
		deployment: deployment, instance: in.name(), context: mustJSON(map[string]string{"message": msg})}
}

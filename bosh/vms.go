package bosh

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// VM is one entry of GET /deployments/:name/vms.
type VM struct {
	// AgentID is the BOSH agent's id.
	AgentID string `json:"agent_id"`
	// CID is the VM's id in the IaaS.
	CID string `json:"cid"`
	// Job is the instance group's name.
	Job string `json:"job"`
	// Index is the instance's index in its group.
	Index int `json:"index"`
	// ID is the instance's id.
	ID string `json:"id"`
	// AZ is the availability zone.
	AZ string `json:"az"`
	// IPs are the VM's addresses.
	IPs []string `json:"ips"`
	// VMCreatedAt is the VM's creation time in Unix seconds, 0 when unknown.
	VMCreatedAt int64 `json:"-"`
	// Active says the VM is the instance's current one.
	Active bool `json:"active"`
}

// UnmarshalJSON reads vm_created_at as the Director writes it (ISO 8601) or
// as Unix seconds.
func (v *VM) UnmarshalJSON(b []byte) error {
	type plain VM
	var w struct {
		plain
		CreatedAt unixTime `json:"vm_created_at"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*v = VM(w.plain)
	v.VMCreatedAt = int64(w.CreatedAt)
	return nil
}

// Instance is one entry of GET /deployments/:name/instances. AgentID and CID
// are empty for an instance without a VM.
type Instance struct {
	// AgentID is the BOSH agent's id.
	AgentID string `json:"agent_id"`
	// CID is the VM's id in the IaaS.
	CID string `json:"cid"`
	// Job is the instance group's name.
	Job string `json:"job"`
	// Index is the instance's index in its group.
	Index int `json:"index"`
	// ID is the instance's id.
	ID string `json:"id"`
	// AZ is the availability zone.
	AZ string `json:"az"`
	// IPs are the instance's addresses.
	IPs []string `json:"ips"`
	// ExpectsVM is false for errands and other instances without a VM.
	ExpectsVM bool `json:"expects_vm"`
}

// unixTime is a time in Unix seconds read from an RFC 3339 string, a number or null.
type unixTime int64

// UnmarshalJSON reads null, Unix seconds or an RFC 3339 time.
func (u *unixTime) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		*u = 0
	case float64:
		if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			*u = unixTime(n) // exact, where float64 is not (past 2^53)
			return nil
		}
		if v < math.MinInt64 || v >= math.MaxInt64 {
			return errors.New("vm_created_at: out of the range of Unix seconds")
		}
		*u = unixTime(v)
	case string:
		if v == "" {
			*u = 0
			return nil
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return fmt.Errorf("vm_created_at: %w", err)
		}
		*u = unixTime(t.Unix())
	default:
		return fmt.Errorf("vm_created_at: unexpected %T", v)
	}
	return nil
}

// VMState is one line of a vm-state task's result (GET
// /deployments/:name/vms?format=full): a VM as its agent describes it.
type VMState struct {
	// ID is the instance's id; Job its group; Index its index.
	ID    string `json:"id"`
	Job   string `json:"job_name"`
	Index int    `json:"index"`
	// CID is the VM's id in the IaaS; AgentID its agent's.
	CID     string `json:"vm_cid"`
	AgentID string `json:"agent_id"`
	// JobState is the agent's: running, failing, starting, stopped or
	// unknown, or "unresponsive agent" when the agent did not answer the
	// Director in time.
	JobState string `json:"job_state"`
	// State is the instance's desired state: started, stopped or detached.
	State string `json:"state"`
	// Active says the VM is the instance's current one (null: none).
	Active *bool `json:"active"`
	// Processes are the agent's processes and their states.
	Processes []ProcessState `json:"processes"`
}

// ProcessState is a process an agent supervises.
type ProcessState struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// Job states the Director and its agents report.
const (
	JobRunning           = "running"
	JobUnresponsiveAgent = "unresponsive agent"
)

// Running says the VM's agent reports its jobs and every process running.
func (v VMState) Running() bool {
	if v.JobState != JobRunning {
		return false
	}
	for _, p := range v.Processes {
		if p.State != JobRunning {
			return false
		}
	}
	return true
}

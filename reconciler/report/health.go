package report

import (
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
)

// UnhealthyInstance is an instance whose VMs do not all run, since when
// (the health document's entry).
type UnhealthyInstance struct {
	// InstanceID and Deployment name the instance and its deployment.
	InstanceID string `json:"instance_id"`
	Deployment string `json:"deployment"`
	// Since is when it was first seen unhealthy; CheckedAt when the
	// Director was last asked.
	Since     time.Time `json:"since"`
	CheckedAt time.Time `json:"checked_at"`
	// VMs are its VMs that do not run as they should.
	VMs []UnhealthyVM `json:"vms"`
}

// maxReason bounds Reason.
const maxReason = 1024

// Reason says in a line what is wrong, for a log, a webhook, the dashboard;
// at most maxReason bytes.
func (e UnhealthyInstance) Reason() string {
	parts := make([]string, 0, len(e.VMs))
	for _, v := range e.VMs {
		parts = append(parts, v.String())
	}
	return textcut.Prefix(strings.Join(parts, "; "), maxReason)
}

// UnhealthyVM is a VM of an unhealthy instance that does not run as it
// should, as the Director describes it.
type UnhealthyVM struct {
	// Instance is group/index (id).
	Instance string `json:"instance"`
	// CID is the VM's id in the IaaS.
	CID string `json:"vm_cid,omitempty"`
	// JobState is the agent's ("failing", "stopped"...), or "unresponsive
	// agent" when it did not answer the Director.
	JobState string `json:"job_state"`
	// Failing are its processes that do not run.
	Failing []string `json:"failing,omitempty"`
}

// String says in a line what is wrong with the VM.
func (v UnhealthyVM) String() string {
	s := v.Instance + ": " + v.JobState
	if len(v.Failing) > 0 {
		s += " (" + strings.Join(v.Failing, ", ") + ")"
	}
	return s
}

package sim

import "time"

// fullVM is a line of a vm-state task's result (GET .../vms?format=full and
// .../instances?format=full), in the Director's key order (jobs/vm_state.rb).
// The VM's fields are null for an instance without one.
type fullVM struct {
	VMCID           *string        `json:"vm_cid"`
	Active          *bool          `json:"active"`
	VMCreatedAt     *string        `json:"vm_created_at"`
	CloudProperties map[string]int `json:"cloud_properties"`
	DiskCID         *string        `json:"disk_cid"`
	DiskCIDs        []string       `json:"disk_cids"`
	IPs             []string       `json:"ips"`
	AgentID         *string        `json:"agent_id"`
	JobName         string         `json:"job_name"`
	Index           int            `json:"index"`
	JobState        *string        `json:"job_state"`
	State           string         `json:"state"`
	VMType          string         `json:"vm_type"`
	Vitals          *vitals        `json:"vitals"`
	Processes       []process      `json:"processes"`
	AZ              string         `json:"az"`
	ID              string         `json:"id"`
	Bootstrap       bool           `json:"bootstrap"`
	Ignore          bool           `json:"ignore"`
	Stemcell        vmStemcell     `json:"stemcell"`
}

type vitals struct {
	CPU    map[string]string            `json:"cpu"`
	Disk   map[string]map[string]string `json:"disk"`
	Load   []string                     `json:"load"`
	Mem    map[string]string            `json:"mem"`
	Swap   map[string]string            `json:"swap"`
	Uptime uptime                       `json:"uptime"`
}

type uptime struct {
	Secs int64 `json:"secs"`
}

type process struct {
	Name   string             `json:"name"`
	State  string             `json:"state"`
	Uptime uptime             `json:"uptime"`
	Mem    processMem         `json:"mem"`
	CPU    map[string]float64 `json:"cpu"`
}

type processMem struct {
	KB      int     `json:"kb"`
	Percent float64 `json:"percent"`
}

type vmStemcell struct {
	Name       *string `json:"name"`
	Version    *string `json:"version"`
	APIVersion *int    `json:"api_version"`
}

// fullVMOf is what the Director writes for an instance: from its agent
// when it has a VM (an unresponsive agent gives no vitals and no
// processes; a stopped instance's jobs are stopped), the VM's fields null
// when it has none.
func fullVMOf(in instance, now time.Time) fullVM {
	v := fullVM{CloudProperties: map[string]int{"cpu": 2, "ram": 4096, "disk": 20480}, DiskCIDs: []string{},
		IPs: in.ips, JobName: in.job, Index: in.index, State: in.state, VMType: in.group.vmType, AZ: in.az,
		ID: in.id, Bootstrap: in.bootstrap, Processes: []process{}}
	if in.group.disk {
		disk := "disk-" + stableUUID(in.id, "disk")
		v.DiskCID, v.DiskCIDs = &disk, []string{disk}
	}
	if !in.expectsVM {
		return v
	}
	active, created, api := true, in.createdAtText(), 3
	cid, agentID, jobState := in.cid, in.agentID, in.agent
	stemName, stemVersion := in.group.stemcell.Name, in.group.stemcell.Version
	v.VMCID, v.Active, v.VMCreatedAt, v.AgentID, v.JobState = &cid, &active, &created, &agentID, &jobState
	v.Stemcell = vmStemcell{Name: &stemName, Version: &stemVersion, APIVersion: &api}
	if in.agent == AgentUnresponsive {
		return v // the Director's get_state timed out
	}
	up := uptime{Secs: int64(now.Sub(in.createdAt).Seconds())}
	v.Vitals = &vitals{
		CPU: map[string]string{"sys": "1.3", "user": "4.9", "wait": "0.1"},
		Disk: map[string]map[string]string{"ephemeral": {"inode_percent": "0", "percent": "0"},
			"persistent": {"inode_percent": "0", "percent": "67"}, "system": {"inode_percent": "34", "percent": "48"}},
		Load: []string{"0.00", "0.03", "0.05"}, Mem: map[string]string{"kb": "227028", "percent": "6"},
		Swap: map[string]string{"kb": "25972", "percent": "1"}, Uptime: up,
	}
	procState := AgentRunning
	switch {
	case in.state == instStopped:
		jobState, procState = "stopped", "unknown" // monit no longer watches them
		v.JobState = &jobState
	case in.agent == AgentFailing:
		procState = "failing"
	}
	for _, j := range in.group.jobs {
		v.Processes = append(v.Processes, process{Name: j.name, State: procState, Uptime: up,
			Mem: processMem{KB: 489836, Percent: 12.1}, CPU: map[string]float64{"total": 0}})
	}
	return v
}

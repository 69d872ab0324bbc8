package sim

import "time"

// fullVM is a line of a vm-state task's result (GET .../vms?format=full).
type fullVM struct {
	VMCID           string         `json:"vm_cid"`
	Active          bool           `json:"active"`
	VMCreatedAt     string         `json:"vm_created_at"`
	CloudProperties map[string]int `json:"cloud_properties"`
	DiskCID         *string        `json:"disk_cid"`
	DiskCIDs        []string       `json:"disk_cids"`
	IPs             []string       `json:"ips"`
	AgentID         string         `json:"agent_id"`
	JobName         string         `json:"job_name"`
	Index           int            `json:"index"`
	JobState        string         `json:"job_state"`
	State           string         `json:"state"`
	VMType          string         `json:"vm_type"`
	Vitals          vitals         `json:"vitals"`
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
	Name   string         `json:"name"`
	State  string         `json:"state"`
	Uptime uptime         `json:"uptime"`
	Mem    processMem     `json:"mem"`
	CPU    map[string]int `json:"cpu"`
}

type processMem struct {
	KB      int     `json:"kb"`
	Percent float64 `json:"percent"`
}

type vmStemcell struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	APIVersion int    `json:"api_version"`
}

// fullVMOf is what the agent of a healthy VM reports.
func fullVMOf(in instance, now time.Time) fullVM {
	up := uptime{Secs: int64(now.Sub(in.createdAt).Seconds())}
	v := fullVM{VMCID: in.cid, Active: true, VMCreatedAt: in.createdAtText(),
		CloudProperties: map[string]int{"cpu": 2, "ram": 4096, "disk": 20480}, DiskCIDs: []string{},
		IPs: in.ips, AgentID: in.agentID, JobName: in.job, Index: in.index, JobState: "running", State: "started",
		VMType: in.group.vmType, AZ: in.az, ID: in.id, Bootstrap: in.bootstrap, Processes: []process{},
		Stemcell: vmStemcell{Name: in.group.stemcell.Name, Version: in.group.stemcell.Version, APIVersion: 3},
		Vitals: vitals{
			CPU: map[string]string{"sys": "1.3", "user": "4.9", "wait": "0.1"},
			Disk: map[string]map[string]string{"ephemeral": {"inode_percent": "0", "percent": "0"},
				"persistent": {"inode_percent": "0", "percent": "67"}, "system": {"inode_percent": "34", "percent": "48"}},
			Load: []string{"0.00", "0.03", "0.05"}, Mem: map[string]string{"kb": "227028", "percent": "6"},
			Swap: map[string]string{"kb": "25972", "percent": "1"}, Uptime: up,
		},
	}
	if in.group.disk {
		disk := "disk-" + stableUUID(in.id, "disk")
		v.DiskCID, v.DiskCIDs = &disk, []string{disk}
	}
	for _, j := range in.group.jobs {
		v.Processes = append(v.Processes, process{Name: j.name, State: "running", Uptime: up,
			Mem: processMem{KB: 489836, Percent: 12.1}, CPU: map[string]int{"total": 0}})
	}
	return v
}

package report

import "time"

// HealthLoopStatus is what the health loop (the loop beside the runs that
// asks the Directors for the VM states) is doing, for the reconciler's
// status.
type HealthLoopStatus struct {
	// Leading says the loop works (its daemon leads).
	Leading bool `json:"leading"`
	// HandedAt is when the run whose handover it works from started.
	HandedAt *time.Time `json:"handed_at,omitempty"`
	// TasksAtOnce is the budget of vm-state tasks at once, per Director.
	TasksAtOnce int `json:"tasks_at_once"`
	// Directors are each Director's figures.
	Directors []HealthLoopDirector `json:"directors"`
	// Idle says the newest handover is taken, nothing is due or running
	// and what was learnt is written, as of tick Ticks (how many times the
	// loop looked since the daemon started).
	Idle  bool   `json:"idle"`
	Ticks uint64 `json:"ticks"`
}

// HealthLoopDirector is the health loop's figures for one Director,
// counted since the daemon started.
type HealthLoopDirector struct {
	Director string `json:"director"`
	// First is how many deployments wait to be asked first; Sweep how many
	// of the slot's share are left (SlotShare were in it at its start).
	First     int   `json:"first"`
	Sweep     int   `json:"sweep"`
	Slot      int64 `json:"slot"`
	SlotShare int   `json:"slot_share"`
	// InFlight is the vm-state tasks running now, MostAtOnce the most
	// there ever were.
	InFlight   int `json:"in_flight"`
	MostAtOnce int `json:"most_at_once"`
	// Started is the vm-state tasks started (Swept of them the sweep's),
	// Checked those answered, Failed those that were not.
	Started int `json:"started"`
	Swept   int `json:"swept"`
	Checked int `json:"checked"`
	Failed  int `json:"failed"`
	// HeldOff is how often a task was not started because the Director
	// had a task of the broker's queued; Busy how often a deployment was
	// left because a task held it.
	HeldOff int `json:"held_off"`
	Busy    int `json:"busy"`
	// LastCheck is when a deployment was last asked about.
	LastCheck *time.Time `json:"last_check,omitempty"`
}

package health

import (
	"slices"
	"time"
)

// Target is a deployment the health loop may ask the Directors about.
type Target struct {
	// Instance is the instance it deploys.
	Instance string
	// Director is the Director that listed it.
	Director string
	// Busy says a task held it, or its instance's operation was in
	// progress, when the run listed it: its VMs may be changing.
	Busy bool
}

// Handover is what a run hands the health loop: the deployments of the
// instances it knows that the Directors listed (a retiring instance's are
// left out: its VMs are stopped on purpose), those the event feeds named
// (an instance or VM event, an alert), and the instances whose entries go
// (the record or the deployment is gone). The loop works from the newest;
// the run never waits for it.
type Handover struct {
	// At is when the run started; RunID names it.
	At    time.Time
	RunID string
	// Targets are by deployment name.
	Targets map[string]Target
	// Named are deployments to ask first.
	Named []string
	// Gone are instance ids whose entries are dropped.
	Gone []string
}

// Of is the deployments of Targets on Director director.
func (h Handover) Of(director string) []string {
	var out []string
	for name, t := range h.Targets {
		if t.Director == director {
			out = append(out, name)
		}
	}
	return out
}

// PendingOf is the document's Pending made of lists: at most MaxPending
// deployments within MaxPendingBytes, each once, sorted.
func PendingOf(lists ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	size := 0
	for _, list := range lists {
		for _, name := range list {
			if len(out) < MaxPending && !seen[name] && size+PendingBytes(name) <= MaxPendingBytes {
				seen[name] = true
				size += PendingBytes(name)
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

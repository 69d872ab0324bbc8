package health

import (
	"encoding/json"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// FuzzJudge: whatever a Director answers (decoded as the client decodes
// it), what Judge keeps is bounded (at most maxListed VMs an instance, maxFailing
// failing processes a VM, maxText bytes a text) and never a VM that runs.
func FuzzJudge(f *testing.F) {
	f.Add([]byte(`[{"id":"a","job_name":"redis","index":0,"vm_cid":"vm-1","job_state":"failing","state":"started","processes":[{"name":"redis","state":"failing"}]}]`))
	f.Add([]byte(`[{"id":"a","job_state":"unresponsive agent","state":"started","active":true},{"id":"a","job_state":"running","state":"stopped"}]`))
	f.Fuzz(func(t *testing.T, answer []byte) {
		var states []bosh.VMState
		if json.Unmarshal(answer, &states) != nil {
			return
		}
		for id, vms := range Judge(states) {
			if len(vms) > maxListed {
				t.Fatalf("%d VMs kept for %q", len(vms), id)
			}
			for _, v := range vms {
				if len(v.Failing) > maxFailing || len(v.Instance) > maxText || len(v.CID) > maxText || len(v.JobState) > maxText {
					t.Fatalf("unbounded %+v", v)
				}
				for _, p := range v.Failing {
					if len(p) > maxText {
						t.Fatalf("process name of %d bytes", len(p))
					}
				}
			}
		}
		for _, s := range states {
			if s.Running() && s.State == "started" {
				for _, v := range Judge([]bosh.VMState{s})[s.ID] {
					t.Fatalf("a running VM judged: %+v", v)
				}
			}
		}
	})
}

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// runSummary is what the soak reads of a run summary (GET /b/runs).
type runSummary struct {
	StartedAt       time.Time `json:"started_at"`
	DurationSeconds float64   `json:"duration_seconds"`
	Result          string    `json:"result"`
	Reason          string    `json:"reason"`
	Platform        *struct {
		State             string `json:"state"`
		OrphanDeployments []struct {
			InstanceID string `json:"instance_id"`
			Reads      int    `json:"reads"`
		} `json:"orphan_deployments"`
		Stopped []step `json:"stopped"`
		Deleted []step `json:"deleted"`
		Refused string `json:"refused"`
	} `json:"platform"`
}

// step is a retirement step a run reports.
type step struct {
	InstanceID string `json:"instance_id"`
	Error      string `json:"error"`
}

// retirementFigures are what the runs did to the orphan deployments: the
// retirement steps taken, the refusals, the runs that could not read the
// platform, and the proof's reads of each orphan deployment in the last
// run that read the platform.
type retirementFigures struct {
	Stopped    int            `json:"stopped"` // instances, each once
	Deleted    int            `json:"deleted"`
	Refused    []string       `json:"refused,omitempty"`
	Unread     int            `json:"runs_platform_unknown"`
	LastProofs map[string]int `json:"last_proof_reads,omitempty"`
}

// retirement sums the runs' platform sections (runs newest first).
func retirement(runs []runSummary) retirementFigures {
	var f retirementFigures
	stopped, deleted := map[string]bool{}, map[string]bool{}
	for _, r := range runs {
		p := r.Platform
		if p == nil {
			continue
		}
		for _, st := range p.Stopped {
			stopped[st.InstanceID] = stopped[st.InstanceID] || st.Error == ""
		}
		for _, st := range p.Deleted {
			deleted[st.InstanceID] = deleted[st.InstanceID] || st.Error == ""
		}
		if p.Refused != "" && !slices.Contains(f.Refused, p.Refused) {
			f.Refused = append(f.Refused, p.Refused)
		}
		if p.State == "unknown" {
			f.Unread++
		} else if f.LastProofs == nil {
			f.LastProofs = map[string]int{}
			for _, o := range p.OrphanDeployments {
				f.LastProofs[o.InstanceID] = o.Reads
			}
		}
	}
	for _, ok := range stopped {
		if ok {
			f.Stopped++
		}
	}
	for _, ok := range deleted {
		if ok {
			f.Deleted++
		}
	}
	return f
}

// end is when the run ended.
func (r runSummary) end() time.Time {
	return r.StartedAt.Add(time.Duration(r.DurationSeconds * float64(time.Second)))
}

// runs are the run summaries the daemons keep in Vault (newest first),
// read from any daemon that answers; none when none does.
func (s *soak) runs(ctx context.Context) []runSummary {
	for _, d := range s.daemons {
		if !d.running() {
			continue
		}
		body, err := operator(ctx, d, http.MethodGet, "/b/runs?limit=1000")
		var out struct {
			Runs []runSummary `json:"runs"`
		}
		if err == nil && json.Unmarshal(body, &out) == nil {
			return out.Runs
		}
	}
	return nil
}

// failedRuns counts the runs whose result is failure.
func failedRuns(runs []runSummary) int {
	n := 0
	for _, r := range runs {
		if r.Result == "failure" {
			n++
		}
	}
	return n
}

// faultWindow is how long after a fault its effects are counted.
const faultWindow = 30 * time.Second

// figures is a fault's FAULT line: its window and what the OSB clients
// saw in it and the 30 s after it (seconds with an error, errors,
// requests sent again), the leader changes of the daemons and of Vault's
// active node, the runs that started in it and failed, and how long after
// its end a run next succeeded (recovered_s; -1: none did).
func (s *soak) figures(f *fault, runs []runSummary) string {
	from, to := f.start.Unix(), f.end.Add(faultWindow).Unix()
	s.ledger.mu.Lock()
	errSeconds, errs, retries := 0, 0, 0
	for sec, n := range s.ledger.errorsAt {
		if sec >= from && sec <= to {
			errSeconds++
			errs += n
		}
	}
	for sec, n := range s.ledger.retriesAt {
		if sec >= from && sec <= to {
			retries += n
		}
	}
	s.ledger.mu.Unlock()
	failed, recovered := 0, -1.0
	for _, r := range runs {
		if r.StartedAt.Unix() >= from && r.StartedAt.Unix() <= to && r.Result == "failure" {
			failed++
		}
		if r.Result != "failure" && r.end().After(f.end) {
			if d := r.end().Sub(f.end).Seconds(); recovered < 0 || d < recovered {
				recovered = d
			}
		}
	}
	out := map[string]any{"fault": f.name, "seconds": int(f.end.Sub(f.start).Seconds()), "osb_error_seconds": errSeconds,
		"osb_errors": errs, "osb_retries": retries, "leader_changes": f.leaderChanges, "vault_leader_changes": f.vaultSwitches,
		"runs_failed": failed, "recovered_s": int(recovered), "ok": f.err == nil}
	if f.err != nil {
		out["error"] = f.err.Error()
	}
	raw, _ := json.Marshal(out)
	return string(raw)
}

package reconciler

import (
	"context"
	"encoding/json"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// maxLoggedItems bounds each list of a summary kept in the run log.
const maxLoggedItems = 100

// conflictKey identifies a conflict across runs.
func conflictKey(c Conflict) string { return c.InstanceID + "\x00" + c.Loser }

// knownConflicts are the conflicts the last complete run reported: a
// conflict is recorded in the instance's history once, when it appears.
func (m *Manager) knownConflicts() map[string]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	known := make(map[string]bool, len(m.conflicts))
	for _, c := range m.conflicts {
		known[conflictKey(c)] = true
	}
	return known
}

// logRun appends a finished run (not a dry run) to the run log in Vault and
// prunes it to Config.RunLog; a failure is logged only.
func (m *Manager) logRun(r *run, s Summary) {
	if s.DryRun || m.parts.fence != nil && m.parts.fence() != nil { // a daemon that lost the lease writes nothing
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := json.Marshal(loggable(s))
	if err == nil {
		err = m.parts.store.AppendRun(ctx, vault.RunEntry{ID: s.RunID, StartedAt: s.StartedAt, Summary: raw})
	}
	if err == nil {
		_, err = m.parts.store.PruneRuns(ctx, m.cfg.RunLog)
	}
	if err != nil {
		r.log.Warn("could not record the run in the run log", "error", err)
	}
}

// loggable is s with its lists cut to maxLoggedItems each (the counts stay whole).
func loggable(s Summary) Summary {
	s.Conflicts = cutList(s.Conflicts)
	s.Quarantined = cutList(s.Quarantined)
	s.NewlyQuarantined = cutList(s.NewlyQuarantined)
	s.Released = cutList(s.Released)
	s.Plan = nil
	errs := make([]string, len(s.Errors))
	for i, e := range s.Errors {
		errs[i] = truncate(e, maxQuarantineError)
	}
	s.Errors = errs
	return s
}

func cutList[T any](l []T) []T {
	if len(l) > maxLoggedItems {
		return l[:maxLoggedItems]
	}
	return l
}

// restoreLast reads the newest run of the run log, so that a restarted
// daemon's status shows the last run and its conflicts are not recorded
// again; a failure is logged only.
func (m *Manager) restoreLast(ctx context.Context) {
	m.mu.Lock()
	have := m.last != nil
	m.mu.Unlock()
	if !have {
		m.adoptNewest(ctx)
	}
}

// followRunLog, on a daemon that does not lead, takes the newest run of the
// run log (the leader's) as its last run, so that its status and dashboard
// follow the leader's runs; a failure is logged only.
func (m *Manager) followRunLog(ctx context.Context) { m.adoptNewest(ctx) }

// adoptNewest takes the newest run of the run log as the last run when it
// is newer than the one known (and, over the whole estate, its conflicts).
func (m *Manager) adoptNewest(ctx context.Context) {
	runs, err := m.Runs(ctx, 1)
	if err != nil {
		m.log.Warn("could not read the run log (entries that could be read are used)", "error", err)
	}
	if len(runs) == 0 {
		return
	}
	s := runs[0]
	s.Duration = time.Duration(s.DurationSeconds * float64(time.Second))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last != nil && !s.StartedAt.After(m.last.StartedAt) {
		return
	}
	m.last = &s
	if s.Scope == nil {
		m.lastFull, m.conflicts = &s, s.Conflicts
		if m.conflicts == nil {
			m.conflicts = []Conflict{}
		}
	}
}

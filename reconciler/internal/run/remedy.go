package run

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/redeploy"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// remover removes an instance's records after a full backup, as a
// deprovision does; *vault.Store has it.
type remover interface {
	RemoveAll(ctx context.Context, id string) (string, error)
}

// remedy applies reconciler.remediation to the orphans it allows.
type remedy struct {
	cfg       config.RemediationConfig
	directors *fleet.Directors
	renderer  ports.Renderer                                                        // nil: no rendering
	hold      func(ctx context.Context, id string) (context.Context, func(), error) // nil: not held
	outOfRun  func(*vault.Record) bool                                              // whether a record's Director is out of the run
	vault     guard.Guarded
	scope     report.Scope
	index     map[string]*vault.Record
	listed    map[string]bool
	id        string // the run's
	start     time.Time
	dryRun    bool
	ledger    *memory.Ledger
	hist      *memory.Historian
	log       *slog.Logger
}

// remedy is the run's remediation.
func (r *run) remedy() *remedy {
	return &remedy{cfg: r.p.Config.Remediation, directors: r.p.Directors, renderer: r.p.Renderer, hold: r.p.Hold,
		outOfRun: r.fleet.Unknown, vault: r.vault, scope: r.opts.Scope, index: r.seen.index, listed: r.seen.listed, id: r.id,
		start: r.start, dryRun: r.opts.DryRun, ledger: r.ledger, hist: r.hist, log: r.log}
}

// remediable lists the orphans the run may remediate, oldest orphan first,
// at most Remediation.MaxPerRun: flagged for at least MinAge, not
// remediated within MinAge, no broker operation in progress, its deployment
// still not listed and its Director listed, within the run's scope.
func (m *remedy) remediable() []string {
	type cand struct {
		id    string
		since time.Time
	}
	var out []cand
	for id, rec := range m.index {
		if !rec.Orphaned || rec.OperationInProgress() || m.listed[rec.Deployment(id)] || m.outOfRun(rec) ||
			!m.scope.CoversRecord(id, rec) {
			continue
		}
		since, err := time.Parse(time.RFC3339, rec.OrphanedAt)
		if err != nil || m.start.Sub(since) < m.cfg.MinAge {
			continue
		}
		if at, err := time.Parse(time.RFC3339, rec.RemediatedAt); err == nil && m.start.Sub(at) < m.cfg.MinAge {
			continue
		}
		out = append(out, cand{id, since})
	}
	slices.SortFunc(out, func(a, b cand) int { return cmp.Or(a.since.Compare(b.since), cmp.Compare(a.id, b.id)) })
	ids := make([]string, 0, min(len(out), m.cfg.MaxPerRun))
	for _, c := range out[:min(len(out), m.cfg.MaxPerRun)] {
		ids = append(ids, c.id)
	}
	return ids
}

// remediate applies the mode to the orphans it allows (a dry run only
// lists them); each action is in the summary, the instance's history and a
// "remediated" notification.
func (m *remedy) remediate(ctx context.Context) {
	mode := m.cfg.Mode
	if mode == "" || mode == config.RemediateNone {
		return
	}
	done := []report.Remediation{}
	for _, id := range m.remediable() {
		if ctx.Err() != nil {
			break
		}
		rem := report.Remediation{InstanceID: id, Deployment: m.index[id].Deployment(id), Action: mode}
		if !m.dryRun {
			var err error
			switch mode {
			case config.RemediateRedeploy:
				rem.TaskID, err = m.redeploy(ctx, id, rem.Deployment)
			case config.RemediatePurge:
				rem.Backup, err = m.vault.Memory.RemoveAll(ctx, id)
			}
			if err != nil {
				rem.Error = err.Error()
				m.ledger.FailUnlessStopped(ctx, report.InstanceKey(id), fmt.Errorf("instance %s: remediation (%s): %w", id, mode, err))
			} else {
				m.record(rem)
			}
		}
		done = append(done, rem)
	}
	m.ledger.Count(func(s *report.Summary) { s.Remediated = done })
}

// redeploy deploys the orphan's manifest, through a task it does not wait
// for (the next runs see the deployment come back), and stamps the attempt
// on the record so that it is not tried again before min_age. What is
// deployed is what the broker renders for an owned record, else the
// manifest Vault holds unless it is one recorded as drift.
func (m *remedy) redeploy(ctx context.Context, id, name string) (int, error) {
	rec := m.index[id]
	dep := m.directors.Deployer(rec.Director)
	if dep == nil {
		return 0, redeploy.ErrNoDeployer
	}
	if m.hold != nil { // no broker operation starts meanwhile; one that started since the run read the index is seen
		hctx, release, err := m.hold(ctx, id)
		if err != nil {
			return 0, fmt.Errorf("taking the instance's hold: %w", err)
		}
		defer release()
		ctx = hctx
		cur, err := m.vault.Index.Record(ctx, id)
		switch {
		case err != nil:
			return 0, fmt.Errorf("reading its record again: %w", err)
		case cur == nil || !cur.Orphaned || cur.OperationInProgress():
			return 0, fmt.Errorf("%w: the instance changed since the run read it (gone, no longer orphaned, or an operation started)", redeploy.ErrRefused)
		}
		rec = cur
	}
	stored, ok, err := m.vault.Documents.Manifest(ctx, id)
	if err != nil {
		return 0, err
	}
	md, err := m.vault.Documents.Metadata(ctx, id)
	if err != nil {
		return 0, err
	}
	events, err := m.vault.Memory.Events(ctx, id, 0)
	if err != nil {
		return 0, fmt.Errorf("reading its history (the drifts it records): %w", err)
	}
	src := redeploy.Source{Renderer: m.renderer, Drifts: redeploy.Drifts(md, events)}
	text, what, err := src.Manifest(ctx, id, rec, stored, ok, "its stored manifest")
	if err != nil {
		return 0, err
	}
	if err := redeploy.Check(text, name, what); err != nil {
		return 0, err
	}
	stamp := records.Stamp(m.start)
	if _, err := m.vault.Index.Update(ctx, map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
		if cur == nil || !cur.Orphaned {
			return nil, nil
		}
		cur.RemediatedAt = stamp
		return cur, nil
	}}); err != nil {
		return 0, fmt.Errorf("stamping the attempt: %w", err)
	}
	task, _, err := redeploy.Deploy(ctx, dep, redeploy.Request{Instance: id, Deployment: name, Manifest: text,
		What: what, Why: "remediate", Operation: "remediation", Backups: m.vault.Backups})
	return task.ID, err
}

// record writes the history event and the notification.
func (m *remedy) record(rem report.Remediation) {
	msg := fmt.Sprintf("orphan redeployed from the manifest Vault holds (task %d)", rem.TaskID)
	if rem.Action == config.RemediatePurge {
		msg = fmt.Sprintf("orphan purged: its records removed after backup %s", rem.Backup)
	}
	m.log.Warn("orphan remediated", "instance", rem.InstanceID, "deployment", rem.Deployment, "action", rem.Action,
		"task", rem.TaskID, "backup", rem.Backup)
	m.hist.Add(rem.InstanceID, vault.Event{Kind: "remediated", Deployment: rem.Deployment, Message: msg,
		Details: map[string]string{"action": rem.Action, "backup": rem.Backup, "task_id": fmt.Sprint(rem.TaskID)}})
	if m.hist != nil {
		m.hist.Notify(notify.Event{Type: notify.Remediated, InstanceID: rem.InstanceID, Deployment: rem.Deployment,
			Director: m.hist.DirectorName(rem.InstanceID, rem.Deployment), Reason: msg, RunID: m.id})
	}
}

package operation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// Previewer reads what a deployment runs and what the Director says
// deploying another manifest changes; *bosh.Client has it.
type Previewer interface {
	Manifest(ctx context.Context, name string) (string, error)
	Diff(ctx context.Context, name string, manifest []byte) (bosh.DeploymentDiff, error)
}

// Director is what an operation needs of the instance's Director;
// *bosh.Client has it.
type Director interface {
	Previewer
	Deploy(ctx context.Context, manifest []byte) (bosh.Task, error)
	TaskFinder
}

// Backer takes a backup of an instance whose manifest part is the one the
// Director runs; *vault.Store has it.
type Backer interface {
	BackupRunning(ctx context.Context, id, running string) (string, error)
}

// ErrNoBackup is a deploy over a running deployment refused because no
// backup could be taken (backups are off): nothing that runs is replaced
// without one.
var ErrNoBackup = errors.New("no backup was taken (backups are off): nothing that runs is replaced without one")

// ErrUnreadable wraps a failure to read what runs or the Director's diff:
// the deploy is not previewed, so it is not made.
var ErrUnreadable = errors.New("the deploy could not be previewed")

// Deploy is one deploy an operation means to make.
type Deploy struct {
	// Operation names it ("update", "upgrade", "bind", "rollback", ...).
	Operation string
	// Instance and Deployment are the instance and its deployment; the
	// manifest must name the deployment.
	Instance, Deployment string
	// Manifest is what the operation would deploy.
	Manifest string
	// KeepVariables keeps the running manifest's configuration-server
	// variables that Manifest would replace (a rendering from the plan;
	// not a backup's manifest, which is deployed as it was).
	KeepVariables bool
	// Guard judges the diff; its Operation is set from Operation.
	Guard Guard
	// RunningRead is what the deployment runs when the caller read it
	// already (the Director's manifest: an upgrade compares it with
	// Vault's first); nil: Prepare reads it (the Preview's Running).
	RunningRead *string
}

// Preview is a deploy read against what runs and judged, ready to be backed
// up and started.
type Preview struct {
	Deploy
	// Running is the manifest the Director runs ("" when the deployment
	// does not exist: Exists false).
	Running string
	Exists  bool
	// Kept are the places whose variables KeepVariables kept; Manifest is
	// then the rendering with them kept.
	Kept []string
	// Changes are what the Director's diff says the deploy changes;
	// Allowed the guarded ones the operator's allowance let through.
	Changes, Allowed []Change
	// Backup is the backup BackUp took ("" before).
	Backup string

	diffContext json.RawMessage
}

// Prepare reads what runs, keeps its variables (KeepVariables), asks the
// Director's diff with the manifest to deploy and judges its changes: a
// *RefusedError when the guard refuses (nothing is written or deployed);
// an error wrapping ErrUnreadable when what runs or the diff could not be
// read. The Preview comes back with a refusal too, for the report.
func Prepare(ctx context.Context, d Previewer, dep Deploy) (*Preview, error) {
	p := &Preview{Deploy: dep}
	var running string
	var err error
	if dep.RunningRead != nil {
		running = *dep.RunningRead
	} else {
		running, err = d.Manifest(ctx, dep.Deployment)
	}
	switch {
	case errors.Is(err, bosh.ErrDeploymentNotFound):
	case err != nil:
		return p, fmt.Errorf("%w: reading what deployment %s runs: %w", ErrUnreadable, dep.Deployment, err)
	default:
		p.Running, p.Exists = running, true
	}
	if p.Exists && dep.KeepVariables {
		kept, places, err := KeepVariables(p.Running, p.Manifest)
		if err != nil {
			return p, fmt.Errorf("keeping the variables of deployment %s: %w", dep.Deployment, err)
		}
		p.Manifest, p.Kept = kept, places
	}
	diff, err := d.Diff(ctx, dep.Deployment, []byte(p.Manifest))
	if err != nil {
		return p, fmt.Errorf("%w: the Director's diff of deployment %s: %w", ErrUnreadable, dep.Deployment, err)
	}
	p.diffContext = diff.Context
	if p.Exists {
		p.Changes = Classify(diff.Lines)
	}
	g := dep.Guard
	g.Operation = dep.Operation
	p.Allowed, err = g.Check(p.Changes)
	return p, err
}

// Changed says whether the deploy changes anything of what runs (a new
// deployment always does).
func (p *Preview) Changed() bool { return !p.Exists || len(p.Changes) > 0 }

// BackUp backs up the instance with the manifest that runs, before the
// deploy replaces it: ErrNoBackup when none was taken. A deployment that
// does not exist yet has nothing to lose: no backup, no error.
func (p *Preview) BackUp(ctx context.Context, b Backer) (string, error) {
	if !p.Exists {
		return "", nil
	}
	id, err := b.BackupRunning(ctx, p.Instance, p.Running)
	switch {
	case err != nil:
		return "", fmt.Errorf("backing up what deployment %s runs: %w", p.Deployment, err)
	case id == "":
		return "", ErrNoBackup
	}
	p.Backup = id
	return id, nil
}

// Start creates the deploy's task under contextID with the configs the
// diff was made with (the Director refuses it when they changed since),
// finding a lost answer by its context id (Start).
func (p *Preview) Start(ctx context.Context, d Director, contextID string, attempts Attempts) (bosh.Task, error) {
	return Start(ctx, contextID, OfDeployment(d, p.Deployment), attempts, p.Call(d))
}

// Call is the request that creates the deploy's task on d, with the
// configs the diff was made with; for a caller that starts it itself.
func (p *Preview) Call(d interface {
	Deploy(ctx context.Context, manifest []byte) (bosh.Task, error)
}) func(context.Context) (bosh.Task, error) {
	return func(ctx context.Context) (bosh.Task, error) {
		if len(p.diffContext) > 0 {
			ctx = bosh.WithDiffContext(ctx, p.diffContext)
		}
		return d.Deploy(ctx, []byte(p.Manifest))
	}
}

// Details are the preview's facts for a history event: the diff's summary,
// the variables kept, the backup and the changes allowed.
func (p *Preview) Details() map[string]string {
	if !p.Exists { // a new deployment: everything is new
		return map[string]string{}
	}
	out := Summary(p.Changes)
	if len(p.Kept) > 0 { // what the broker did not put there and kept
		kept := p.Kept
		if len(kept) > 20 {
			kept = append(kept[:20:20], fmt.Sprintf("and %d more", len(p.Kept)-20))
		}
		out["kept"] = strings.Join(kept, ", ")
	}
	if p.Backup != "" {
		out["backup"] = p.Backup
	}
	if len(p.Allowed) > 0 {
		s := ""
		for i, c := range p.Allowed {
			if i > 0 {
				s += "; "
			}
			s += c.String()
		}
		out["allowed"] = s
	}
	return out
}

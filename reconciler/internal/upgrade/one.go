package upgrade

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/redeploy"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// ErrBusy is matched by the error of a Hold that found the instance held
// by another operation (the broker's, another daemon's).
var ErrBusy = errors.New("another operation holds the instance")

// recordTimeout bounds the write of a task's id once the task exists.
const recordTimeout = 30 * time.Second

// Records reads and changes index records; *vault.Indexes has it.
type Records interface {
	Record(ctx context.Context, id string) (*vault.Record, error)
	Update(ctx context.Context, changes map[string]vault.Change) (vault.UpdateResult, error)
}

// Documents reads and writes an instance's documents; *vault.Documents has it.
type Documents interface {
	Manifest(ctx context.Context, id string) (string, bool, error)
	PutManifest(ctx context.Context, id, text string) error
	Metadata(ctx context.Context, id string) (*vault.Metadata, error)
	// AllowedNow are the classes an operator allowed for the instance
	// (blacksmith allow-changes).
	AllowedNow(ctx context.Context, id string, now time.Time) ([]string, error)
}

// Backups takes and reads an instance's backups; *vault.Archive has it.
type Backups interface {
	BackupRunning(ctx context.Context, id, running string) (string, error)
	BackupManifest(ctx context.Context, id, backupID string) (string, bool, error)
}

// History appends to an instance's history; *vault.History has it.
type History interface {
	AppendEvent(ctx context.Context, id string, e vault.Event) error
}

// Director reads what a Director runs; *bosh.Client has it.
type Director interface {
	Manifest(ctx context.Context, name string) (string, error)
}

// Tasks finds a Director's tasks; *bosh.Client has it.
type Tasks interface {
	Tasks(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error)
}

// Target is the Director an instance lives on.
type Target struct {
	Name     string
	Director Director
	Deployer ports.Deployer
	// Tasks finds an upgrade's task by its context id when its id was
	// never recorded; nil: such an upgrade is left to the broker.
	Tasks Tasks
	// Errands runs the plan's post-deploy errands; nil: an upgrade of a
	// plan that names some ends ErrandFailed.
	Errands Errands
}

// Upgrader upgrades one instance at a time (each call on its own; many at once are fine).
type Upgrader struct {
	Records   Records
	Documents Documents
	Backups   Backups
	History   History
	Journal   *Journal
	// Targets is the Director an index record names ("" the first): false
	// when it is not configured, or cannot deploy.
	Targets func(recorded string) (Target, bool)
	// Renderer renders the plan's current manifest for a record.
	Renderer ports.Renderer
	// PostDeploy are a plan's post-deploy errands (plan.yml's
	// lifecycle_errands), run after its upgrade's deploy; nil: none.
	PostDeploy func(planID string) []string
	// Hold holds the instance against the broker's operations (its lock,
	// its lease with HA) until the function it answers is called; an error
	// matching ErrBusy says another operation holds it. Nil: not held.
	Hold func(ctx context.Context, id string) (context.Context, func(), error)
	// Exclusive runs f while no reconciler run is in progress, so that a
	// run that read the index before the upgrade marked the record cannot
	// take the new manifest for drift. Nil: f is run as it is.
	Exclusive func(ctx context.Context, f func(context.Context) error) error
	// Poll is how often a task is asked about; TaskTimeout bounds the wait.
	Poll, TaskTimeout time.Duration
	// DryRun decides without writing or deploying anything.
	DryRun bool
	// Allow are the classes of guarded change an operator allowed for
	// this fleet upgrade (recorded in each instance's history).
	Allow []operation.Class
	// Fleet names the fleet upgrade in history events and the journal.
	Fleet string
	Now   func() time.Time
	Log   *slog.Logger
}

// upgrade is one instance's upgrade once its task is under way.
type upgrade struct {
	report.UpgradeEntry
	target   Target
	rendered string // "" when resumed: the Director's manifest is recorded
	taskID   int
	preview  map[string]string // the diff's summary for the history (nil when resumed)
}

// One upgrades candidate c top to bottom: check and render under the
// instance's hold, back up, mark the record's operation, deploy; wait for
// the task; record the new version and manifest, or roll back to the
// backup's manifest and quarantine the instance.
func (u *Upgrader) One(ctx context.Context, c Candidate, canary bool, slot Slot) report.UpgradeResult {
	r := c.result(report.UpgradeInFlight)
	r.Canary, r.StartedAt = canary, u.Now()
	if up := u.start(ctx, c, &r, slot); up != nil {
		u.follow(ctx, up, &r, slot)
	} else if report.UpgradeFailure(r.State) && !u.DryRun { // failed before its task (templates, backup, the Director's refusal): set aside too
		u.mark().end(context.WithoutCancel(ctx), &upgrade{UpgradeEntry: report.UpgradeEntry{InstanceID: c.InstanceID, To: c.To}}, r.State, r.Reason)
	}
	r.EndedAt, r.Reason = u.Now(), cut(r.Reason)
	return r
}

// start takes the upgrade as far as its task: nil when it ended there (r
// says how). It prepares and backs up on its own, then takes its slot for
// the deploy.
// What it writes, it writes after the instance's hold is given back: the
// mark waits for the run in progress (Exclusive), and a run may wait for an
// instance's hold (settling its stuck operation).
func (u *Upgrader) start(ctx context.Context, c Candidate, r *report.UpgradeResult, slot Slot) *upgrade {
	p := u.prepare(ctx, c, r)
	switch {
	case p == nil:
		return nil
	case p.same:
		u.recordOnly(ctx, c, p.rec, r)
		return nil
	case u.DryRun:
		r.State, r.Reason = report.UpgradeWouldUpgrade, fmt.Sprintf("would deploy the manifest rendered from plan %s's version %s (%s)",
			c.PlanID, c.To, summary(p.preview))
		return nil
	case !backUp(ctx, u.Backups, c, p, r):
		return nil
	}
	if why := slot.Take(ctx); why != "" {
		r.State, r.Reason = report.UpgradePending, why
		return nil
	}
	return u.deploy(ctx, c, p, r)
}

// prepared is what an upgrade found under the instance's hold.
type prepared struct {
	rec      *vault.Record
	target   Target
	rendered string // what is deployed: the plan's rendering, what runs kept (preview.Manifest)
	same     bool   // the Director's diff finds nothing to change
	backup   string // taken before the deploy (backUp)
	preview  *operation.Preview
}

// prepare reads and judges the instance under its hold, reads what runs
// and renders the plan's manifest: nil when the upgrade ends there.
func (u *Upgrader) prepare(ctx context.Context, c Candidate, r *report.UpgradeResult) *prepared {
	hold := u.hold
	if u.DryRun { // it writes nothing: it needs no lease (a lease is a write)
		hold = func(ctx context.Context, _ string) (context.Context, func(), error) { return ctx, func() {}, nil }
	}
	hctx, release, err := hold(ctx, c.InstanceID)
	if err != nil {
		r.State, r.Reason = skipOrBusy(err, "taking the instance's lease")
		return nil
	}
	defer release()
	ctx = hctx
	rec, err := u.Records.Record(ctx, c.InstanceID)
	switch {
	case err != nil:
		r.State, r.Reason = report.UpgradeSkipped, "reading its record: "+err.Error()
		return nil
	case rec == nil:
		r.State, r.Reason = report.UpgradeSkipped, "the index has no record of it any more"
		return nil
	}
	if r.State, r.Reason = judge(rec, c); r.State != report.UpgradeInFlight {
		return nil
	}
	t, ok := u.Targets(rec.Director)
	if !ok {
		r.State, r.Reason = report.UpgradeSkipped, fmt.Sprintf("its Director %q is not configured to deploy", c.Director)
		return nil
	}
	running, why := u.running(ctx, c, t)
	if why != "" {
		r.State, r.Reason = report.UpgradeSkipped, why
		return nil
	}
	rendered, err := u.Renderer.RenderHeld(ctx, c.InstanceID, rec)
	if err == nil {
		err = redeploy.Check(rendered, c.Deployment, "the rendered manifest")
	}
	if err != nil {
		r.State, r.Reason = report.UpgradeFailed, "the plan's templates do not render for its recorded parameters: "+err.Error()+"; nothing deployed"
		return nil
	}
	p, err := operation.Prepare(ctx, t.Deployer, operation.Deploy{Operation: "upgrade", Instance: c.InstanceID,
		Deployment: c.Deployment, Manifest: rendered, KeepVariables: true, Guard: operation.Guard{Allow: allowed(ctx, u, c.InstanceID)},
		RunningRead: &running})
	if why := notPrepared(err, p); why != "" {
		r.State, r.Reason = report.UpgradeSkipped, why
		var refused *operation.RefusedError
		if errors.As(err, &refused) && !u.DryRun {
			u.event(ctx, c.InstanceID, vault.Event{Kind: "refused", Deployment: c.Deployment, Message: refused.Error(),
				Details: p.Details()})
		}
		return nil
	}
	return &prepared{rec: rec, target: t, rendered: p.Manifest, same: !p.Changed(), preview: p}
}

// summary is a preview's changes in a few words, for a dry run's reason.
func summary(p *operation.Preview) string {
	d := p.Details()
	out := d["changes"] + " change(s)"
	for _, k := range []string{"diff_groups", "diff_releases", "diff_stemcells", "diff_properties", "kept", "allowed"} {
		if v := d[k]; v != "" {
			out += "; " + strings.TrimPrefix(k, "diff_") + ": " + v
		}
	}
	return out
}

// notPrepared says why an upgrade whose preview ended in err (or whose
// manifest still needs secrets the broker does not hold) is skipped: a
// precondition that stopped it, never a failure of the plan; "" when none.
func notPrepared(err error, p *operation.Preview) string {
	var refused *operation.RefusedError
	switch {
	case errors.As(err, &refused):
		return refused.Error() + "; allow the changes for this instance (upgrade-all --allow CLASS,...) if they are meant"
	case err != nil:
		return err.Error() + "; nothing deployed"
	}
	if err := operation.CheckHeld(p.Manifest); err != nil {
		return err.Error() + ": its credentials live in the Director's configuration server, or Vault lost them; " +
			"restore its secrets (blacksmith restore) or upgrade it by hand; nothing deployed"
	}
	return ""
}

// judge says whether rec may be upgraded to c.To now (InFlight), or why not.
func judge(rec *vault.Record, c Candidate) (string, string) {
	switch {
	case rec.Orphaned:
		return report.UpgradeSkipped, "orphaned: its deployment is gone"
	case rec.Adopted:
		return report.UpgradeSkipped, "adopted from BOSH and not confirmed by an operator: confirm the adoption first"
	case rec.Retiring != nil:
		return report.UpgradeSkipped, "retiring: its VMs are stopped because the platform does not list it; it is upgraded once the platform lists it again"
	case rec.OperationInProgress():
		return busy, fmt.Sprintf("its %s operation is in progress", rec.LastOperation.Type)
	case rec.PlanID != c.PlanID:
		return report.UpgradeSkipped, fmt.Sprintf("its plan changed to %s since the fleet upgrade started", rec.PlanID)
	case rec.MaintenanceVersion != "" && catalog.CompareVersions(rec.MaintenanceVersion, c.To) >= 0:
		return report.UpgradeCurrent, ""
	}
	return report.UpgradeInFlight, ""
}

// running is what the instance's Director runs, when it is what Vault
// records and not a manifest recorded as drift; else why the upgrade is
// skipped.
func (u *Upgrader) running(ctx context.Context, c Candidate, t Target) (string, string) {
	text, err := t.Director.Manifest(ctx, c.Deployment)
	switch {
	case errors.Is(err, bosh.ErrDeploymentNotFound):
		return "", fmt.Sprintf("its deployment is gone from Director %s: the next run flags the orphan", t.Name)
	case err != nil:
		return "", fmt.Sprintf("Director %s cannot be reached: %v", t.Name, err)
	}
	stored, ok, err := u.Documents.Manifest(ctx, c.InstanceID)
	if err != nil {
		return "", "reading its manifest in Vault: " + err.Error()
	}
	if !ok || stored != text {
		return "", "what its Director runs is not the manifest Vault records (changed behind the broker's back, " +
			"or not recorded yet): the next reconciler run records it; upgrade it once that is settled"
	}
	md, err := u.Documents.Metadata(ctx, c.InstanceID)
	if err != nil {
		return "", "reading its metadata in Vault: " + err.Error()
	}
	if redeploy.Drifts(md, nil)[digest(text)] {
		return "", "it runs a manifest recorded as drift (changed behind the broker's back), which a failed upgrade " +
			"could not be rolled back to: restore or redeploy it first"
	}
	return text, ""
}

// allowed are the classes the fleet upgrade u allows and those an
// operator allowed for the instance; an allowance that cannot be read
// adds nothing.
func allowed(ctx context.Context, u *Upgrader, id string) []operation.Class {
	names, err := u.Documents.AllowedNow(ctx, id, u.Now())
	if err != nil {
		u.Log.Warn("could not read the instance's allowance: none applies", "instance", id, "error", err)
	}
	return append(slices.Clone(u.Allow), operation.KnownClasses(names)...)
}

func (u *Upgrader) hold(ctx context.Context, id string) (context.Context, func(), error) {
	if u.Hold == nil {
		return ctx, func() {}, nil
	}
	return u.Hold(ctx, id)
}

func (u *Upgrader) exclusive(ctx context.Context, f func(context.Context) error) error {
	if u.Exclusive == nil {
		return f(ctx)
	}
	return u.Exclusive(ctx, f)
}

// event appends a history event; a failure is logged only.
func (u *Upgrader) event(ctx context.Context, id string, e vault.Event) {
	e.Actor, e.RunID = "reconciler", u.Fleet
	if err := u.History.AppendEvent(ctx, id, e); err != nil {
		u.Log.Warn("could not record a history event", "instance", id, "kind", e.Kind, "error", err)
	}
}

// skipOrBusy is the state of an attempt that met err while doing what.
func skipOrBusy(err error, what string) (string, string) {
	if errors.Is(err, ErrBusy) || errors.Is(err, operation.ErrRaced) {
		return busy, what + ": " + err.Error()
	}
	return report.UpgradeSkipped, what + ": " + err.Error()
}

func orUnknown(v string) string {
	if v == "" {
		return "an unknown version"
	}
	return v
}

func digest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

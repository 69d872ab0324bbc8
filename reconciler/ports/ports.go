package ports

import (
	"context"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Director is what a run asks one BOSH Director; *bosh.Client has it.
type Director interface {
	// Deployments lists the deployments in the cheap form.
	Deployments(ctx context.Context) ([]bosh.Deployment, error)
	// Manifest returns a deployment's manifest.
	Manifest(ctx context.Context, name string) (string, error)
	// VMs lists a deployment's VMs without a task.
	VMs(ctx context.Context, name string) ([]bosh.VM, error)
	// Events returns one page of the Director's event log, newest first.
	Events(ctx context.Context, q bosh.EventQuery) ([]bosh.Event, error)
}

// Tasks finds Director tasks in flight before an orphan is flagged;
// *bosh.Client has it.
type Tasks interface {
	// Tasks lists the tasks q selects.
	Tasks(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error)
}

// Health reads the state of a deployment's VMs from their agents (a task
// on the Director); *bosh.Client has it.
type Health interface {
	// VMStates is GET /deployments/:name/vms?format=full, polled every poll.
	VMStates(ctx context.Context, name string, poll time.Duration) ([]bosh.VMState, error)
}

// NamedDirector is one configured Director.
type NamedDirector struct {
	// Name is its bosh.name.
	Name string
	// Director lists its deployments and fetches their manifests and VMs. Required.
	Director Director
	// Tasks finds its tasks in flight; nil: no task check.
	Tasks Tasks
	// Deployer deploys on it (rollback, remediation); nil: no redeploy of its instances.
	Deployer Deployer
	// Health reads its VMs' states; nil: taken from Director when it has
	// them, else its instances' health is not checked.
	Health Health
}

// Deployer previews a deploy (what runs, the Director's diff), deploys a
// manifest through a Director task, finds a task by its context id and
// follows it; *bosh.Client has it.
type Deployer interface {
	operation.Director
	// WaitTask polls a task until it ends.
	WaitTask(ctx context.Context, id int, poll time.Duration) (bosh.Task, error)
}

// Renderer renders an instance's manifest as the broker does: a record's
// plan's templates, with its recorded parameters and the instance's stored
// secrets; *broker.Broker has it.
type Renderer interface {
	// RenderManifest is instance id's manifest as rec would be deployed.
	RenderManifest(ctx context.Context, id string, rec *vault.Record) (string, error)
	// RenderHeld is RenderManifest for an instance that runs: without
	// stored secrets it renders stand-ins (operation.StandIns) for the
	// running manifest's variables to replace, generating none.
	RenderHeld(ctx context.Context, id string, rec *vault.Record) (string, error)
}

// Operations settles a broker operation that stays in progress, from its
// Director task; *broker.Broker has it.
type Operations interface {
	// SettleOperation follows the instance's operation to the Director and
	// records its outcome once its task has ended (or failed, with a
	// reason, when the Director has no task for it): state is "in
	// progress", "succeeded", "failed", or "gone" when the record no longer
	// exists. An error with state "in progress" means the Director could
	// not be asked.
	SettleOperation(ctx context.Context, id string) (state, description string, err error)
	// StopOrphanDeployment is an orphan deployment's retirement's first
	// step: a full backup, the retirement (its deletion due at deleteAfter)
	// and a stop operation recorded, its VMs stopped hard (disks kept)
	// through a task the next run settles; it refuses, with an error that
	// has a method Refusal() bool, an instance the broker does not own,
	// orphaned, busy or stopped already.
	StopOrphanDeployment(ctx context.Context, id, reason string, deleteAfter time.Time) (backup string, task int, err error)
	// StartRetired ends the retirement of an instance the platform lists
	// again: its VMs started through a task; the retirement ends when that
	// task succeeds.
	StartRetired(ctx context.Context, id, reason string) (task int, err error)
	// DeleteOrphanDeployment is the retirement's second step: it deletes
	// the deployment, as a deprovision would (a full backup first, a
	// deprovision operation recorded, a Director task the next run
	// settles), only after its stop succeeded and its deletion is due; it
	// refuses, with an error that has a method Refusal() bool, anything
	// else.
	DeleteOrphanDeployment(ctx context.Context, id, reason string) (backup string, task int, err error)
	// RecoverBindings checks the instance's bindings: one whose
	// credentials are gone from Vault is put back (from a backup, or from
	// the deployed manifest for a per_binding plan) or said lost, never
	// generated again. It answers how many it checked and, by binding id,
	// the outcome of each that was gone: "restored from ...", "unlisted:
	// ..." or "lost: why".
	RecoverBindings(ctx context.Context, id string) (checked int, outcomes map[string]string, err error)
}

// Notifier is told of the events an operator may want pushed (webhooks);
// *notify.Notifier has it. Notify never blocks.
type Notifier interface {
	Notify(e notify.Event)
}

// PlatformReader is the Cloud Controller as the platform cross-check
// reads it; *cf.Client has it.
type PlatformReader interface {
	// ServicePlans are the plans of the broker registered under brokerName.
	ServicePlans(ctx context.Context, brokerName string) ([]cf.Plan, error)
	// ServiceInstances are every managed instance of the plans, all pages,
	// or an error: never a partial list.
	ServiceInstances(ctx context.Context, planGUIDs []string) ([]cf.Instance, error)
}

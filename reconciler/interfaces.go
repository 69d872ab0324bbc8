package reconciler

import (
	"context"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Director is what the scanner asks the BOSH Director; *bosh.Client has it.
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

// Tasks finds Director tasks in flight before an orphan is flagged; *bosh.Client has it.
type Tasks interface {
	// Tasks lists the tasks q selects.
	Tasks(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error)
}

// Index reads and changes the instance index; *vault.Store has it.
type Index interface {
	// Index reads every index record.
	Index(ctx context.Context) (*vault.Index, error)
	// Update applies changes, batched per shard.
	Update(ctx context.Context, changes map[string]vault.Change) (vault.UpdateResult, error)
}

// Metadata reads and writes an instance's metadata; *vault.Store has it.
type Metadata interface {
	// Metadata returns an instance's metadata, nil when absent.
	Metadata(ctx context.Context, id string) (*vault.Metadata, error)
	// PutMetadata writes an instance's metadata.
	PutMetadata(ctx context.Context, id string, md *vault.Metadata) error
}

// Manifests reads and writes an instance's manifest; *vault.Store has it.
type Manifests interface {
	// Manifest returns an instance's manifest and whether there is one.
	Manifest(ctx context.Context, id string) (string, bool, error)
	// PutManifest writes an instance's manifest.
	PutManifest(ctx context.Context, id, text string) error
	// CreateManifest writes a manifest where there is none (a cold run's
	// write, without the read that keeps a document's other keys);
	// vault.ErrConflict when there is one.
	CreateManifest(ctx context.Context, id, text string) error
	// Instances lists the instance ids that have documents under the mount
	// (metadata, manifest), so that a cold run reads nothing for the others.
	Instances(ctx context.Context) (map[string]bool, error)
}

// Backups backs an instance up before a change, and reads the record of its
// newest backup when its index entry is lost; *vault.Store has it.
type Backups interface {
	// Backup snapshots an instance's records; "" when backups are off.
	Backup(ctx context.Context, id string) (string, error)
	// LatestBackupRecord is the record kept in the newest backup, nil when none.
	LatestBackupRecord(ctx context.Context, id string) (*vault.Record, string, error)
}

// Memory keeps the reconciler's own state across runs and restarts (the
// quarantine); *vault.Store has it.
type Memory interface {
	// ReadState decodes the named state document into v; false when absent.
	ReadState(ctx context.Context, name string, v any) (bool, error)
	// WriteState writes the named state document.
	WriteState(ctx context.Context, name string, v any) error
}

// Store is every Vault operation the reconciler uses; *vault.Store has it,
// as the wiring point (cmd/blacksmith) checks.
type Store interface {
	Index
	Metadata
	Manifests
	Backups
	Memory
	History
	Inspector
	Remover
}

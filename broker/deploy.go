package broker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// deployer is the broker's one way to change what an instance's Director
// runs (operation): a deploy previewed and guarded, what runs backed up
// before it is replaced or deleted, and what runs recorded after a failure.
// Provision, update, bind and unbind deploy through it; deprovision and
// retirement back up through it.
type deployer struct {
	store   Store
	dirs    *directors
	ops     *recorder
	history *history
	report  reporter
	log     *slog.Logger
}

// deploy (on dir) stores what op's deploy needs (newSecrets unless nil,
// then the manifest to deploy), backs up what runs and starts the
// previewed deploy's task, whose id it returns; a failure is recorded on
// op (and 0 returned): nothing that runs is replaced without a backup.
func (d *deployer) deploy(ctx context.Context, id string, dir NamedDirector, op *vault.Operation, newSecrets map[string]any, p *operation.Preview) int {
	if _, err := p.BackUp(ctx, d.store); err != nil {
		d.ops.fail(ctx, id, op, op.Type+" failed: could not back up what runs; nothing was deployed", err)
		return 0
	}
	if newSecrets != nil { // created once: another broker that generated others first wins, and this deploy fails
		if err := d.store.CreateSecret(ctx, credentialsPath(id), newSecrets); err != nil {
			d.ops.fail(ctx, id, op, op.Type+" failed: could not store the instance's secrets", err)
			return 0
		}
	}
	if err := d.store.PutManifest(ctx, id, p.Manifest); err != nil {
		d.ops.fail(ctx, id, op, op.Type+" failed: could not store the deployment manifest", err)
		return 0
	}
	return d.ops.startTask(ctx, id, p.Deployment, op, dir, p.Call(dir.Director))
}

// preview reads what dep would change on dir and judges it
// (operation.Prepare): a refusal is a 422 naming each change, a Director
// that cannot be asked a 503-like failure; nothing is written either way.
func (d *deployer) preview(ctx context.Context, dir NamedDirector, dep operation.Deploy) (*operation.Preview, error) {
	dep.Guard.Allow = append(dep.Guard.Allow, d.allowed(ctx, dep.Instance)...)
	p, err := operation.Prepare(ctx, retried{dirs: d.dirs, d: dir}, dep)
	var refused *operation.RefusedError
	switch {
	case errors.As(err, &refused):
		d.log.Warn("refused by the change guard", "instance", dep.Instance, "operation", dep.Operation, "changes", refused.Error())
		d.history.append(ctx, dep.Instance, vault.Event{Kind: eventRefused, Deployment: dep.Deployment, Message: refused.Error(),
			Details: p.Details()})
		return nil, guardRefused(refused)
	case errors.Is(err, operation.ErrUnreadable):
		d.log.Error("could not preview the deploy", "instance", dep.Instance, "operation", dep.Operation, "error", err)
		return nil, directorUnavailable(dep.Operation, dir.Name)
	case err != nil: // what runs does not parse as a manifest: nothing is kept or guarded from it
		return nil, d.report.internal(dep.Operation+" refused: what the instance's deployment runs could not be read as a manifest; nothing was changed",
			err, "instance", dep.Instance)
	}
	return p, nil
}

// allowed are the classes of guarded change an operator allowed for the
// instance now; an allowance that cannot be read allows nothing (logged).
func (d *deployer) allowed(ctx context.Context, id string) []operation.Class {
	names, err := d.store.AllowedNow(ctx, id, time.Now())
	if err != nil {
		d.log.Warn("could not read the instance's allowance: none applies", "instance", id, "error", err)
	}
	return operation.KnownClasses(names)
}

// backupRunning backs the instance up with the manifest its Director runs
// (every record and secret too), before a delete: Vault's manifest when
// the deployment is gone or cannot be read. "" when backups are off.
func (d *deployer) backupRunning(ctx context.Context, dir NamedDirector, id, name string) (string, error) {
	running, err := retried{dirs: d.dirs, d: dir}.Manifest(ctx, name)
	switch {
	case err == nil:
		return d.store.BackupRunning(ctx, id, running)
	case errors.Is(err, bosh.ErrDeploymentNotFound):
	default:
		d.log.Warn("could not read what runs before deleting it: Vault's manifest is backed up", "instance", id, "error", err)
	}
	backup, err := d.store.BackupAll(ctx, id)
	if errors.Is(err, vault.ErrNotFound) {
		return "", nil
	}
	return backup, err
}

// recordRunning stores what the Director runs as the instance's manifest
// after a failed update or binding operation (the deploy stored the one it
// asked for): the reconciler and the next upgrade then compare against
// what runs, not against what failed. A failure is only logged: the next run records it.
func (d *deployer) recordRunning(ctx context.Context, id string, rec *vault.Record) {
	dir, err := d.dirs.of(rec)
	if err != nil {
		return
	}
	text, err := dir.Director.Manifest(ctx, rec.Deployment(id))
	if err == nil {
		err = d.store.PutManifest(ctx, id, text)
	}
	if err != nil {
		d.log.Warn("could not record what runs after a failed operation; the next reconciler run does", "instance", id, "error", err)
	}
}

// retried is a Director's preview, each call asked again after transient
// faults (directors.ask).
type retried struct {
	dirs *directors
	d    NamedDirector
}

// Manifest is the Director's Manifest, asked again after transient faults.
func (r retried) Manifest(ctx context.Context, name string) (text string, err error) {
	err = r.dirs.ask(ctx, r.d, "manifest", func(ctx context.Context) (err error) {
		text, err = r.d.Director.Manifest(ctx, name)
		return err
	})
	return text, err
}

// Diff is the Director's Diff, asked again after transient faults.
func (r retried) Diff(ctx context.Context, name string, manifest []byte) (d bosh.DeploymentDiff, err error) {
	err = r.dirs.ask(ctx, r.d, "diff", func(ctx context.Context) (err error) {
		d, err = r.d.Director.Diff(ctx, name, manifest)
		return err
	})
	return d, err
}

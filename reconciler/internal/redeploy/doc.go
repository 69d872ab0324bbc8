// Package redeploy is the reconciler's way to deploy an instance's
// manifest to its Director (the broker's operations and the fleet
// upgrades deploy through package operation themselves): a rollback (a
// backup's manifest, followed to its end), a remediation (the manifest
// Vault holds for an orphan, not waited for), a restore's redeploy, each
// previewed and guarded by operation. It checks that the manifest is the
// instance's deployment before anything is sent, names the task after the
// instance (X-Bosh-Context-Id blacksmith-{why}-{id}) and tells a manifest
// unfit to deploy or a task that failed by ErrRefused.
//
// It owns that path only: it must not read or write Vault, nor choose what
// to deploy.
package redeploy

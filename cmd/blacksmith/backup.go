package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// backupsCommand is `blacksmith backups -c FILE INSTANCE`: the instance's
// backups, newest first, one id a line.
func backupsCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	return withStore("backups", args, stderr, env, 1, 1, func(ctx context.Context, store *vault.Store, rest []string) error {
		ids, err := store.Backups(ctx, rest[0])
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			fmt.Fprintf(stderr, "blacksmith backups: instance %s has no backup\n", rest[0])
		}
		for _, id := range ids {
			fmt.Fprintln(stdout, id)
		}
		return nil
	})
}

// restoreCommand is `blacksmith restore [--redeploy] -c FILE INSTANCE
// [BACKUP]`: the instance's index record, metadata, manifest and secrets put
// back from the backup (default the newest), the current state backed up
// first. With --redeploy the backup's manifest is deployed to the Director
// first, through a task that is waited for, so that the next reconciler run
// has nothing to undo; without, Vault alone is repaired.
func restoreCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	var redeploy bool
	flags := func(fs *flag.FlagSet) {
		fs.BoolVar(&redeploy, "redeploy", false, "deploy the backup's manifest to the BOSH Director first (a task, waited for)")
	}
	return withStoreFlags("restore", args, stderr, env, flags, 1, 2, func(ctx context.Context, cfg *config.Config, log *slog.Logger, store *vault.Store, rest []string) error {
		if redeploy {
			return rollback(ctx, cfg, log, store, rest, stdout)
		}
		id := rest[0]
		backup, err := chosenBackup(ctx, store, rest)
		if err != nil {
			return err
		}
		parts, err := store.Archive.BackupParts(ctx, id, backup)
		if err != nil {
			return err
		}
		rep, err := store.Restores.RestoreReported(ctx, id, backup)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "restored instance %s from backup %s (%s)\n", id, backup, describeParts(parts))
		printBindings(stdout, rep.Bindings)
		fmt.Fprintln(stdout, "the Vault records are repaired; the next reconciler run re-derives the manifest from BOSH")
		fmt.Fprintln(stdout, "(to run the backup's manifest on BOSH too, use blacksmith restore --redeploy)")
		return nil
	})
}

// rollback deploys the backup's manifest and then restores the records.
func rollback(ctx context.Context, cfg *config.Config, log *slog.Logger, store *vault.Store, rest []string, stdout io.Writer) error {
	m, err := oneShotManager(cfg, log, store)
	if err != nil {
		return err
	}
	backup := ""
	if len(rest) == 2 {
		backup = rest[1]
	}
	res, err := m.Rollback(ctx, rest[0], backup, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "deployed the manifest of backup %s to deployment %s (task %d), then restored instance %s from it\n",
		res.Backup, res.Deployment, res.TaskID, res.InstanceID)
	if res.SafetyBackup != "" {
		fmt.Fprintf(stdout, "the state before the rollback is in backup %s\n", res.SafetyBackup)
	}
	printBindings(stdout, res.Bindings)
	fmt.Fprintln(stdout, res.Note)
	return nil
}

// printBindings says what a restore did with each binding.
func printBindings(w io.Writer, bindings []vault.BindingRestore) {
	for _, b := range bindings {
		fmt.Fprintf(w, "binding %s: %s (%s)\n", b.BindingID, b.Outcome, b.Reason)
	}
}

// describeParts says what a backup holds: "record, metadata, manifest, 3 secrets".
func describeParts(p vault.BackupContents) string {
	var out []string
	for _, part := range []struct {
		has  bool
		name string
	}{{p.Record, "record"}, {p.Metadata, "metadata"}, {p.Manifest, "manifest"}} {
		if part.has {
			out = append(out, part.name)
		}
	}
	if p.HasSecrets {
		out = append(out, fmt.Sprintf("%d secrets", len(p.Secrets)))
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, ", ")
}

// chosenBackup is the backup named on the command line, else the newest.
func chosenBackup(ctx context.Context, store *vault.Store, rest []string) (string, error) {
	if len(rest) == 2 {
		return rest[1], nil
	}
	ids, err := store.Backups(ctx, rest[0])
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("instance %s has no backup to restore", rest[0])
	}
	return ids[0], nil
}

// withStore loads the configuration, connects to Vault (migrating a legacy
// index, as the daemon does) and runs f; exit 1 when f fails.
func withStore(name string, args []string, stderr io.Writer, env func(string) (string, bool), least, most int,
	f func(context.Context, *vault.Store, []string) error) int {
	return withStoreFlags(name, args, stderr, env, nil, least, most,
		func(ctx context.Context, _ *config.Config, _ *slog.Logger, store *vault.Store, rest []string) error {
			return f(ctx, store, rest)
		})
}

// withStoreFlags is withStore with flags of the command's own (extra) and
// the configuration and logger handed to f.
func withStoreFlags(name string, args []string, stderr io.Writer, env func(string) (string, bool), extra func(*flag.FlagSet),
	least, most int, f func(context.Context, *config.Config, *slog.Logger, *vault.Store, []string) error) int {
	path, rest, code, ok := flagsAndArgs(name, args, stderr, env, extra, least, most)
	if !ok {
		return code
	}
	cfg, log, code, ok := loadConfig(path, stderr, env)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	store, err := connectVault(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "blacksmith %s: connecting to vault: %v\n", name, err)
		return exitError
	}
	defer store.Close()
	if err := f(ctx, cfg, log, store, rest); err != nil {
		fmt.Fprintf(stderr, "blacksmith %s: %v\n", name, err)
		return exitError
	}
	return exitOK
}

// adoptCommand is `blacksmith adopt -c FILE INSTANCE`: the operator
// confirms an instance the reconciler adopted from a Director (it found the
// deployment and the broker had no record of it). From then on the broker
// binds, updates and deletes it, it counts against its plan's limits, and
// its deployment and Director are kept for good.
func adoptCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	return withStoreFlags("adopt", args, stderr, env, nil, 1, 1, func(ctx context.Context, cfg *config.Config, log *slog.Logger, store *vault.Store, rest []string) error {
		m, err := oneShotManager(cfg, log, store)
		if err != nil {
			return err
		}
		rec, err := m.Adopt(ctx, rest[0], "operator (blacksmith adopt)")
		if err != nil {
			return err
		}
		director := rec.Director
		if director == "" {
			director = "the first Director"
		}
		fmt.Fprintf(stdout, "instance %s is the broker's own now: deployment %s on %s, plan %s (found by the reconciler at %s)\n",
			rest[0], rec.Deployment(rest[0]), director, rec.PlanID, rec.AdoptedAt)
		return nil
	})
}

// allowChangesCommand is `blacksmith allow-changes [--for DURATION] -c FILE
// INSTANCE CLASSES`: the operator allows the instance's next operations
// (an update, a bind, a fleet upgrade) to make the guarded changes of
// CLASSES (comma-separated: network, az, errand, instance-group, job,
// disk, instances, variable, secret) for DURATION (default 1h, at most
// 168h). Each operation's history names the changes it let through.
func allowChangesCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	lasting := time.Hour
	extra := func(fs *flag.FlagSet) {
		fs.DurationVar(&lasting, "for", time.Hour, "how long the allowance lasts (at most 168h)")
	}
	return withStoreFlags("allow-changes", args, stderr, env, extra, 2, 2, func(ctx context.Context, cfg *config.Config, log *slog.Logger, store *vault.Store, rest []string) error {
		classes, err := operation.ParseClasses(rest[1])
		if err != nil {
			return err
		}
		m, err := oneShotManager(cfg, log, store)
		if err != nil {
			return err
		}
		a, err := m.AllowChanges(ctx, rest[0], classes, lasting, "operator (blacksmith allow-changes)")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "instance %s: its operations may change %s until %s (each one's history says what it let through)\n",
			rest[0], strings.Join(a.Classes, ", "), a.Until)
		return nil
	})
}

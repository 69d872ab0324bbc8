package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

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

// restoreCommand is `blacksmith restore -c FILE INSTANCE [BACKUP]`: the
// instance's index record, metadata and manifest put back from the backup
// (default the newest), the current state backed up first.
func restoreCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	return withStore("restore", args, stderr, env, 1, 2, func(ctx context.Context, store *vault.Store, rest []string) error {
		id := rest[0]
		backup, err := chosenBackup(ctx, store, rest)
		if err != nil {
			return err
		}
		parts, err := store.BackupParts(ctx, id, backup)
		if err != nil {
			return err
		}
		if err := store.Restore(ctx, id, backup); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "restored instance %s from backup %s (%s)\n", id, backup, describeParts(parts))
		fmt.Fprintln(stdout, "the Vault records are repaired; the next reconciler run re-derives the manifest from BOSH")
		return nil
	})
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
	path, rest, code, ok := flagsAndArgs(name, args, stderr, env, nil, least, most)
	if !ok {
		return code
	}
	cfg, _, code, ok := loadConfig(path, stderr, env)
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
	if err := f(ctx, store, rest); err != nil {
		fmt.Fprintf(stderr, "blacksmith %s: %v\n", name, err)
		return exitError
	}
	return exitOK
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// rebuildIndexCommand is `blacksmith rebuild-index [--dry-run|--apply] -c
// FILE`: the instance index rebuilt from BOSH and the per-instance
// documents (records of running deployments by a forced reconciler run,
// the others' from their backups, manifests or histories, flagged
// orphaned); the report printed as JSON. The default is --dry-run: nothing
// is written without --apply.
func rebuildIndexCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	var apply, dryRun bool
	flags := func(fs *flag.FlagSet) {
		fs.BoolVar(&apply, "apply", false, "write the rebuilt records")
		fs.BoolVar(&dryRun, "dry-run", false, "say what would be written, write nothing (the default)")
	}
	return withStoreFlags("rebuild-index", args, stderr, env, flags, 0, 0,
		func(ctx context.Context, cfg *config.Config, log *slog.Logger, store *vault.Store, _ []string) error {
			if apply && dryRun {
				return fmt.Errorf("--apply and --dry-run: choose one")
			}
			m, err := oneShotManager(cfg, log, store)
			if err != nil {
				return err
			}
			rep, err := m.RebuildIndex(ctx, apply)
			if perr := printJSON(stdout, rep); perr != nil && err == nil {
				err = perr
			}
			return err
		})
}

// exportLegacyCommand is `blacksmith export-legacy [--dry-run|--apply] -c
// FILE`: the way back to an upstream Blacksmith, the legacy index
// ({mount}/db) written from the sharded index (vault.ExportLegacy); the
// report (what is added, changed, removed against the db in place, and
// where the replaced one was copied) printed as JSON. The default is
// --dry-run: nothing is written without --apply.
func exportLegacyCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	var apply, dryRun bool
	flags := func(fs *flag.FlagSet) {
		fs.BoolVar(&apply, "apply", false, "write the legacy index (the one in place is copied first)")
		fs.BoolVar(&dryRun, "dry-run", false, "say what would change, write nothing (the default)")
	}
	return withStoreFlags("export-legacy", args, stderr, env, flags, 0, 0,
		func(ctx context.Context, _ *config.Config, _ *slog.Logger, store *vault.Store, _ []string) error {
			if apply && dryRun {
				return fmt.Errorf("--apply and --dry-run: choose one")
			}
			rep, err := store.Maintenance.ExportLegacy(ctx, apply, time.Now())
			if perr := printJSON(stdout, rep); perr != nil && err == nil {
				err = perr
			}
			return err
		})
}

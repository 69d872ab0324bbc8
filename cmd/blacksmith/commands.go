package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// checkConfigCommand is `blacksmith check-config -c FILE`: the configuration
// (see config.CheckConfig), then the catalog it names. The configuration is
// printed only when both are good.
func checkConfigCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	path, code, ok := flags("check-config", args, stderr, env, nil)
	if !ok {
		return code
	}
	var out bytes.Buffer
	if code := config.CheckConfig(path, env, &out, stderr); code != exitOK {
		return code
	}
	cfg, err := config.Load(path, env)
	if err == nil {
		_, err = catalog.Load(cfg.Catalog.Dirs...)
	}
	if err != nil {
		printCatalogProblems(stderr, err)
		return exitError
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(stderr, "check-config: writing configuration: %v\n", err)
		return exitError
	}
	return exitOK
}

// printCatalogProblems prints each problem of the catalog on its own line.
func printCatalogProblems(w io.Writer, err error) {
	var problems *catalog.Problems
	if !errors.As(err, &problems) {
		fmt.Fprintf(w, "check-config: %v\n", err)
		return
	}
	fmt.Fprintf(w, "check-config: %d problem(s) in the catalog:\n", len(problems.List))
	for _, p := range problems.List {
		fmt.Fprintf(w, "  %s\n", p)
	}
}

// serveCommand is `blacksmith [serve] -c FILE`: the daemon, until SIGTERM or SIGINT.
func serveCommand(args []string, stderr io.Writer, env func(string) (string, bool)) int {
	cfg, log, code, ok := setup("serve", args, stderr, env, nil)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := serve(ctx, cfg, log); err != nil {
		log.Error("blacksmith stopped", "error", err)
		return exitError
	}
	log.Info("blacksmith stopped")
	return exitOK
}

// reconcileCommand is `blacksmith reconcile [--dry-run] [--service ID]
// [--plan ID] [--deployment NAME] [--instance ID] -c FILE`: one run against
// the configured Director and Vault (over the scope the flags give), its
// summary (with the plan, for a dry run) printed as JSON. Exit 1 when the
// run could not complete.
func reconcileCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	var dryRun bool
	var scope report.Scope
	cfg, log, code, ok := setup("reconcile", args, stderr, env, func(fs *flag.FlagSet) {
		fs.BoolVar(&dryRun, "dry-run", false, "compute the plan and write nothing")
		fs.StringVar(&scope.Service, "service", "", "only the instances of this service id")
		fs.StringVar(&scope.Plan, "plan", "", "only the instances of this plan id")
		fs.StringVar(&scope.Deployment, "deployment", "", "only this deployment")
		fs.StringVar(&scope.Instance, "instance", "", "only this instance (tried even when quarantined)")
	})
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s, err := reconcileOnce(ctx, cfg, log, report.RunOptions{DryRun: dryRun, Scope: scope})
	if s != nil {
		if perr := printJSON(stdout, s); perr != nil {
			log.Error("cannot print the summary", "error", perr)
			return exitError
		}
	}
	if err != nil {
		log.Error("the run did not complete", "error", err)
		return exitError
	}
	return exitOK
}

// reconcileOnce builds the reconciler and makes one forced run. The summary
// is nil when no run could start.
func reconcileOnce(ctx context.Context, cfg *config.Config, log *slog.Logger, opts report.RunOptions) (*report.Summary, error) {
	store, err := connectVault(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to vault: %w", err)
	}
	defer store.Close()
	m, err := oneShotManager(cfg, log, store)
	if err != nil {
		return nil, err
	}
	opts.Force, opts.Reason = true, "blacksmith reconcile"
	s, err := m.RunOnce(ctx, opts)
	return &s, err
}

// setup parses a subcommand's flags and loads the configuration; ok is
// false when the process must exit with code.
func setup(name string, args []string, stderr io.Writer, env func(string) (string, bool), extra func(*flag.FlagSet)) (*config.Config, *slog.Logger, int, bool) {
	path, code, ok := flags(name, args, stderr, env, extra)
	if !ok {
		return nil, nil, code, false
	}
	return loadConfig(path, stderr, env)
}

// loadConfig loads the configuration and makes the logger it asks for.
// Problems are printed to stderr (exit 2).
func loadConfig(path string, stderr io.Writer, env func(string) (string, bool)) (*config.Config, *slog.Logger, int, bool) {
	cfg, err := config.Load(path, env)
	if err != nil {
		fmt.Fprintf(stderr, "blacksmith: invalid configuration: %v\n", err)
		return nil, nil, exitUsage, false
	}
	level := slog.LevelInfo
	if cfg.Debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)
	return cfg, log, exitOK, true
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

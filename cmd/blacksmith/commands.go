package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
)

// checkConfigCommand is `blacksmith check-config -c FILE`.
func checkConfigCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	path, code, ok := flags("check-config", args, stderr, env, nil)
	if !ok {
		return code
	}
	return config.CheckConfig(path, env, stdout, stderr)
}

// serveCommand is `blacksmith [serve] -c FILE`: the daemon, until SIGTERM or SIGINT.
func serveCommand(args []string, stderr io.Writer, env func(string) (string, bool)) int {
	path, code, ok := flags("serve", args, stderr, env, nil)
	if !ok {
		return code
	}
	cfg, log, code, ok := loadConfig(path, stderr, env)
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

// reconcileCommand is `blacksmith reconcile [--dry-run] -c FILE`: one run
// against the configured Director and Vault, its summary (with the plan,
// for a dry run) printed as JSON. Exit 1 when the run could not complete.
func reconcileCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	var dryRun bool
	path, code, ok := flags("reconcile", args, stderr, env, func(fs *flag.FlagSet) {
		fs.BoolVar(&dryRun, "dry-run", false, "compute the plan and write nothing")
	})
	if !ok {
		return code
	}
	cfg, log, code, ok := loadConfig(path, stderr, env)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	p, err := newParts(cfg, log)
	if err != nil {
		log.Error("cannot start", "error", err)
		return exitError
	}
	store, err := connectVault(ctx, cfg)
	if err != nil {
		log.Error("cannot connect to vault", "error", err)
		return exitError
	}
	defer store.Close()
	m, err := p.manager(store)
	if err != nil {
		log.Error("cannot start the reconciler", "error", err)
		return exitError
	}
	s, runErr := m.RunOnce(ctx, reconciler.RunOptions{DryRun: dryRun, Force: true, Reason: "blacksmith reconcile"})
	if err := printJSON(stdout, s); err != nil {
		log.Error("cannot print the summary", "error", err)
		return exitError
	}
	if runErr != nil {
		log.Error("the run did not complete", "error", runErr)
		return exitError
	}
	return exitOK
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

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"unicode"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// upgradeAllCommand is `blacksmith upgrade-all -c FILE [--dry-run]
// [--canaries N] [--max-in-flight N] [--max-failures N] [--attempt-limit N]
// [--service S] [--plan P] [--director D] [--instance ID]... [--allow CLASSES] [--json]`: one
// fleet upgrade of the outdated instances in scope, under the fleet rules
// (reconciler.upgrades, overridden by the flags). Progress goes to stderr,
// the final table (or the report as JSON) to stdout. Exit 0 only when every
// selected instance is at its plan's version at the end (a dry run: would
// be), 1 otherwise, 2 for bad flags or rules.
func upgradeAllCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	var req reconciler.UpgradeRequest
	var asJSON bool
	cfg, log, code, ok := setup("upgrade-all", args, stderr, env, func(fs *flag.FlagSet) {
		fs.BoolVar(&req.DryRun, "dry-run", false, "list what would be done and change nothing")
		intFlag(fs, &req.Canaries, "canaries", "instances upgraded first (reconciler.upgrades.canaries)")
		intFlag(fs, &req.MaxInFlight, "max-in-flight", "upgrades under way at once (reconciler.upgrades.max_in_flight)")
		intFlag(fs, &req.MaxFailures, "max-failures", "failed upgrades after which none starts; 0: no limit (reconciler.upgrades.max_failures)")
		intFlag(fs, &req.AttemptLimit, "attempt-limit", "attempts at a busy instance (reconciler.upgrades.attempt_limit)")
		fs.StringVar(&req.Scope.Service, "service", "", "only the instances of this service id")
		fs.StringVar(&req.Scope.Plan, "plan", "", "only the instances of this plan id")
		fs.StringVar(&req.Scope.Director, "director", "", "only the instances on this Director (bosh.name)")
		fs.Func("instance", "only this instance (repeat for more; tried even when quarantined)", func(v string) error {
			req.Scope.Instances = append(req.Scope.Instances, v)
			return nil
		})
		fs.Func("allow", "classes of guarded change to allow, comma-separated (network, az, errand, instance-group, job, "+
			"disk, instances, variable, secret): recorded in each instance's history", func(v string) error {
			classes, err := operation.ParseClasses(v)
			req.Allow = append(req.Allow, classes...)
			return err
		})
		fs.BoolVar(&asJSON, "json", false, "print the report as JSON instead of the table")
	})
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	req.Trigger = report.UpgradeByCommand
	req.Progress = func(r report.UpgradeResult) {
		fmt.Fprintf(stderr, "upgrade-all: %s %s %s\n", printable(r.InstanceID), r.State, printable(r.Reason))
	}
	rep, err := upgradeOnce(ctx, cfg, log, req)
	switch {
	case errors.Is(err, reconciler.ErrBadUpgrade):
		fmt.Fprintf(stderr, "upgrade-all: %v\n", err)
		return exitUsage
	case err != nil:
		log.Error("the fleet upgrade could not run", "error", err)
		return exitError
	}
	if asJSON {
		err = printJSON(stdout, rep)
	} else {
		err = printUpgradeTable(stdout, rep)
	}
	if err != nil {
		log.Error("cannot print the report", "error", err)
		return exitError
	}
	if !rep.Done() {
		return exitError
	}
	return exitOK
}

// intFlag is an integer flag that may be left unset (nil).
func intFlag(fs *flag.FlagSet, dst **int, name, usage string) {
	fs.Func(name, usage, func(v string) error {
		if *dst != nil {
			return fmt.Errorf("given twice")
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		*dst = &n
		return nil
	})
}

// upgradeOnce builds the reconciler (with the broker that renders and
// holds the instances) and makes one fleet upgrade.
func upgradeOnce(ctx context.Context, cfg *config.Config, log *slog.Logger, req reconciler.UpgradeRequest) (report.UpgradeReport, error) {
	store, err := connectVault(ctx, cfg)
	if err != nil {
		return report.UpgradeReport{}, fmt.Errorf("connecting to vault: %w", err)
	}
	defer store.Close()
	m, err := oneShotManager(cfg, log, store)
	if err != nil {
		return report.UpgradeReport{}, err
	}
	return m.Upgrades().Run(ctx, req)
}

// printUpgradeTable prints a fleet upgrade's final table: one line an
// instance, then the counts and why it stopped early, if it did.
func printUpgradeTable(w io.Writer, rep report.UpgradeReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tDEPLOYMENT\tPLAN\tFROM\tTO\tSTATE\tTASK\tREASON")
	for _, r := range append(rep.Resumed, rep.Instances...) {
		task := "-"
		if r.TaskID != 0 {
			task = strconv.Itoa(r.TaskID)
			if r.RollbackTaskID != 0 {
				task += "," + strconv.Itoa(r.RollbackTaskID)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(r.InstanceID), printable(r.Deployment), printable(r.PlanID),
			orDash(r.From), orDash(r.To), r.State, task, printable(r.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nfleet upgrade %s (%s", rep.ID, rep.Trigger)
	if rep.DryRun {
		fmt.Fprint(w, ", dry run")
	}
	fmt.Fprintf(w, "): %d instance(s)", len(rep.Instances))
	for _, s := range []string{report.UpgradeUpgraded, report.UpgradeUnchanged, report.UpgradeCurrent, report.UpgradeWouldUpgrade,
		report.UpgradeWouldRecord, report.UpgradeSkipped, report.UpgradeFailed, report.UpgradeRolledBack, report.UpgradeRollbackFailed,
		report.UpgradeErrandFailed, report.UpgradeInterrupted, report.UpgradePending} {
		if n := rep.Counts[s]; n > 0 {
			fmt.Fprintf(w, ", %d %s", n, s)
		}
	}
	fmt.Fprintln(w)
	if rep.Error != "" {
		fmt.Fprintf(w, "could not run: %s\n", rep.Error)
	}
	if rep.Stopped != "" {
		fmt.Fprintf(w, "stopped early: %s\n", rep.Stopped)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return printable(s)
}

// printable is s for an operator's terminal: every control or format
// character (an escape sequence, a carriage return, a bidirectional
// override), line or paragraph separator written as its \u escape, so
// that a Director's content printed in a table can neither move the
// cursor nor reorder what is shown.
func printable(s string) string {
	if !strings.ContainsFunc(s, hiddenRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hiddenRune(r) {
			fmt.Fprintf(&b, "\\u%04X", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hiddenRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// recreateScope narrows recreate-all to some instances.
type recreateScope struct {
	service, plan, director string
	instances               []string
}

// recreateAllCommand is `blacksmith recreate-all [--dry-run] [--canaries N]
// [--max-in-flight N] [--max-failures N] [--service S] [--plan P]
// [--director D] [--instance ID]... [--json] -c FILE`: every VM of every
// instance's deployment recreated by its Director (`bosh recreate`),
// canaries first, under the fleet rules (reconciler.upgrades' canaries,
// max_in_flight, max_failures, task_timeout, overridden by the flags), each
// through the steps every operation takes (see recreator). Progress goes
// to stderr, the table (or JSON) to stdout. Exit 0 every instance in scope
// recreated (a dry run: would be), 1 not (failed, busy, not started) or
// Vault could not be read, 2 bad flags or configuration.
func recreateAllCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	var dryRun, asJSON bool
	var scope recreateScope
	var canaries, inFlight, failures *int
	cfg, log, code, ok := setup("recreate-all", args, stderr, env, func(fs *flag.FlagSet) {
		fs.BoolVar(&dryRun, "dry-run", false, "list the instances that would be recreated and change nothing")
		intFlag(fs, &canaries, "canaries", "instances recreated first (reconciler.upgrades.canaries)")
		intFlag(fs, &inFlight, "max-in-flight", "recreates under way at once (reconciler.upgrades.max_in_flight)")
		intFlag(fs, &failures, "max-failures", "failed recreates after which none starts; 0: no limit (reconciler.upgrades.max_failures)")
		fs.StringVar(&scope.service, "service", "", "only the instances of this service id")
		fs.StringVar(&scope.plan, "plan", "", "only the instances of this plan id")
		fs.StringVar(&scope.director, "director", "", "only the instances on this Director (bosh.name)")
		fs.Func("instance", "only this instance (repeat for more)", func(v string) error {
			scope.instances = append(scope.instances, v)
			return nil
		})
		fs.BoolVar(&asJSON, "json", false, "print the results as JSON instead of the table")
	})
	if !ok {
		return code
	}
	up := cfg.Reconciler.Upgrades
	roll := recreateRoll{canaries: orDefault(canaries, up.Canaries), maxInFlight: orDefault(inFlight, up.MaxInFlight),
		maxFailures: orDefault(failures, up.MaxFailures)}
	if roll.canaries < 0 || roll.maxInFlight < 1 || roll.maxFailures < 0 {
		fmt.Fprintf(stderr, "recreate-all: canaries %d, max in flight %d, max failures %d: want canaries and max failures 0 or more, max in flight 1 or more\n",
			roll.canaries, roll.maxInFlight, roll.maxFailures)
		return exitUsage
	}
	ctx, stop := signalContext()
	defer stop()
	roll.progress = func(r recreateResult) {
		fmt.Fprintf(stderr, "recreate-all: %s %s %s\n", printable(r.InstanceID), r.State, printable(r.Reason))
	}
	results, stopped, err := recreateOnce(ctx, cfg, log, scope, dryRun, roll, up.TaskTimeout)
	if err != nil {
		fmt.Fprintf(stderr, "recreate-all: %v\n", err)
		return exitError
	}
	if asJSON {
		err = printJSON(stdout, map[string]any{"dry_run": dryRun, "instances": results, "stopped": stopped})
	} else {
		err = printRecreateTable(stdout, results, stopped, dryRun)
	}
	if err != nil {
		fmt.Fprintf(stderr, "recreate-all: printing: %v\n", err)
		return exitError
	}
	for _, r := range results {
		if r.State != recreated && r.State != wouldRecreate {
			return exitError
		}
	}
	return exitOK
}

func orDefault(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// recreateOnce reads the instances in scope from Vault and recreates them.
func recreateOnce(ctx context.Context, cfg *config.Config, log *slog.Logger, scope recreateScope, dryRun bool, roll recreateRoll, taskTimeout time.Duration) ([]recreateResult, string, error) {
	store, err := connectVault(ctx, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("connecting to vault: %w", err)
	}
	defer store.Close()
	p, err := newParts(cfg, log)
	if err != nil {
		return nil, "", fmt.Errorf("starting: %w", err)
	}
	p.oneShot = true
	b, err := p.broker(store)
	if err != nil {
		return nil, "", fmt.Errorf("creating the broker: %w", err)
	}
	ix, err := store.Index(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("reading the index: %w", err)
	}
	targets, results, aside, err := recreateTargets(ix, p.directors, scope)
	if err != nil {
		return nil, "", err
	}
	rc := &recreator{store: store, hold: b.HoldInstance, dryRun: dryRun, poll: 2 * time.Second, timeout: taskTimeout, log: log}
	roll.one = rc.one
	stopped := roll.run(ctx, targets, results)
	return append(results, aside...), stopped, nil
}

// recreateTargets are the index's instances in scope with a deployment
// (not orphaned), sorted by id, each with its Director's client (targets,
// and their results to fill), and those set aside (notToRecreate).
func recreateTargets(ix *vault.Index, directors []*bosh.Client, scope recreateScope) (targets []recreateTarget, results, aside []recreateResult, err error) {
	byName := map[string]*bosh.Client{}
	for _, d := range directors {
		byName[d.Name()] = d
	}
	var ids []string
	for id := range ix.Records {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		rec := ix.Records[id]
		if rec.DeploymentName == "" || rec.Orphaned || !scope.has(id, rec) {
			continue
		}
		if why := notToRecreate(rec); why != "" { // as a fleet upgrade sets them aside
			aside = append(aside, recreateResult{InstanceID: id, Deployment: rec.DeploymentName, Director: rec.Director,
				PlanID: rec.PlanID, State: recreateSkip, Reason: why})
			continue
		}
		d := directors[0]
		if rec.Director != "" {
			if d = byName[rec.Director]; d == nil {
				return nil, nil, nil, fmt.Errorf("instance %s: its Director %q is not configured", printable(id), printable(rec.Director))
			}
		}
		targets = append(targets, recreateTarget{id: id, rec: rec, director: d})
		results = append(results, recreateResult{InstanceID: id, Deployment: rec.DeploymentName, Director: rec.Director, PlanID: rec.PlanID})
	}
	return targets, results, aside, nil
}

// notToRecreate says why rec's VMs are not the broker's to recreate ("" they
// are): an instance adopted from BOSH that no operator confirmed (nothing
// the broker did not put there is changed without an operator's say), and
// one retiring (its VMs were stopped because the platform does not list it:
// a recreate would start them).
func notToRecreate(rec *vault.Record) string {
	switch {
	case rec.Adopted:
		return "adopted from BOSH and not confirmed by an operator: confirm the adoption first (blacksmith adopt)"
	case rec.Retiring != nil:
		return "retiring: its VMs are stopped because the platform does not list it"
	}
	return ""
}

func (s recreateScope) has(id string, rec *vault.Record) bool {
	return (s.service == "" || rec.ServiceID == s.service) && (s.plan == "" || rec.PlanID == s.plan) &&
		(s.director == "" || rec.Director == s.director) && (len(s.instances) == 0 || slices.Contains(s.instances, id))
}

// printRecreateTable prints one line an instance, then the counts.
func printRecreateTable(w io.Writer, results []recreateResult, stopped string, dryRun bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tDEPLOYMENT\tPLAN\tCANARY\tSTATE\tTASK\tREASON")
	counts := map[string]int{}
	for _, r := range results {
		task := "-"
		if r.TaskID != 0 {
			task = strconv.Itoa(r.TaskID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%s\t%s\t%s\n", printable(r.InstanceID), printable(r.Deployment), printable(r.PlanID), r.Canary, r.State, task, printable(r.Reason))
		counts[r.State]++
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nrecreate-all")
	if dryRun {
		fmt.Fprint(w, " (dry run)")
	}
	fmt.Fprintf(w, ": %d instance(s)", len(results))
	for _, s := range []string{recreated, wouldRecreate, recreateSkip, recreateFailed, notStarted} {
		if counts[s] > 0 {
			fmt.Fprintf(w, ", %d %s", counts[s], s)
		}
	}
	fmt.Fprintln(w)
	if stopped != "" {
		fmt.Fprintf(w, "stopped early: %s\n", stopped)
	}
	return nil
}

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
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// exitOrphans is orphan-deployments' exit code when there are some (the
// on-demand-service-broker errand's, so that pipelines keep working).
const exitOrphans = 10

// orphanDeploymentsCommand is `blacksmith orphan-deployments -c FILE
// [--json]`: the deployments whose instance the platform (cf) does not
// have, held once against the Directors, Vault and the Cloud Controller; a
// table, or JSON (a list of objects with the errand's deployment_name, and
// more). Exit 10 when there are some, 0 when none, 1 when the platform, a
// Director or Vault could not be read whole (or no cf.api), 2 for bad
// flags. Nothing is changed.
func orphanDeploymentsCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	var asJSON bool
	cfg, log, code, ok := setup("orphan-deployments", args, stderr, env, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print the orphan deployments as JSON instead of the table")
	})
	if !ok {
		return code
	}
	if !cfg.CF.Enabled() {
		fmt.Fprintln(stderr, "orphan-deployments: no platform configured: set cf.api (and cf.client_id, cf.client_secret, cf.broker_name)")
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	rep, err := checkPlatformOnce(ctx, cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "orphan-deployments: %v\n", err)
		return exitError
	}
	list := orphanList(rep)
	if asJSON {
		err = printJSON(stdout, list)
	} else {
		err = printOrphanTable(stdout, rep, list)
	}
	if err != nil {
		fmt.Fprintf(stderr, "orphan-deployments: printing: %v\n", err)
		return exitError
	}
	if len(list) > 0 {
		return exitOrphans
	}
	return exitOK
}

// orphanDeployment is one line of --json: deployment_name as the
// on-demand-service-broker errand prints it, then what the cross-check knows.
type orphanDeployment struct {
	DeploymentName string    `json:"deployment_name"`
	InstanceID     string    `json:"instance_id"`
	PlanID         string    `json:"plan_id"`
	Director       string    `json:"director"`
	AbsentSince    time.Time `json:"absent_since,omitzero"`
	Reads          int       `json:"reads"`
	// DeleteAfter is, for one whose VMs are stopped (retiring), when its
	// deletion is due.
	DeleteAfter time.Time `json:"delete_after,omitzero"`
}

func orphanList(rep report.PlatformReport) []orphanDeployment {
	out := []orphanDeployment{}
	for _, o := range rep.OrphanDeployments {
		out = append(out, orphanDeployment{DeploymentName: o.Deployment, InstanceID: o.InstanceID, PlanID: o.PlanID,
			Director: o.Director, AbsentSince: o.AbsentSince, Reads: o.Reads, DeleteAfter: o.DeleteAfter})
	}
	return out
}

// printOrphanTable prints one line an orphan deployment, then the counts.
func printOrphanTable(w io.Writer, rep report.PlatformReport, list []orphanDeployment) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEPLOYMENT\tINSTANCE\tPLAN\tDIRECTOR\tABSENT SINCE\tREADS\tSTOPPED, DELETED AFTER")
	for _, o := range list {
		since, reads, due := "-", "-", "-"
		if !o.AbsentSince.IsZero() {
			since, reads = o.AbsentSince.UTC().Format(time.RFC3339), strconv.Itoa(o.Reads)
		}
		if !o.DeleteAfter.IsZero() {
			due = o.DeleteAfter.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(o.DeploymentName), printable(o.InstanceID), printable(o.PlanID), orDash(o.Director), since, reads, due)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d orphan deployment(s); the platform lists %d instance(s) of the broker's %d plan(s): %d in step, %d platform-only, %d not judged (an operation in progress, created moments ago)\n",
		len(list), rep.Instances, rep.Plans, rep.Counts[report.InStep], rep.Counts[report.PlatformOnly], rep.Unchecked)
	return err
}

// checkPlatformOnce builds the reconciler and holds the instances against
// the platform once.
func checkPlatformOnce(ctx context.Context, cfg *config.Config, log *slog.Logger) (report.PlatformReport, error) {
	store, err := connectVault(ctx, cfg)
	if err != nil {
		return report.PlatformReport{}, fmt.Errorf("connecting to vault: %w", err)
	}
	defer store.Close()
	m, err := oneShotManager(cfg, log, store)
	if err != nil {
		return report.PlatformReport{}, err
	}
	rep, err := m.Views().Platform(ctx)
	if errors.Is(err, reconciler.ErrPlatformUnknown) {
		return rep, fmt.Errorf("nothing can be said: %w", err)
	}
	return rep, err
}

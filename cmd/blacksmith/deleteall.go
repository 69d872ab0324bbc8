package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/cf"
)

// deleteAllCommand is `blacksmith delete-all-service-instances
// --i-understand-this-deletes-everything [--max-in-flight N] [errand cf
// flags] -c FILE`: every managed instance of the broker's plans
// deprovisioned through the Cloud Controller (DELETE
// /v3/service_instances/:guid, its job waited on), so that the platform
// and the broker stay in step. Without the flag nothing is read or
// deleted. Exit 0 every one deleted (or none there), 1 some not (each
// named) or the platform could not be read, 2 no flag, bad flags or
// configuration.
func deleteAllCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	var ecf errandCF
	var understood bool
	var inFlight int
	cfg, log, code, ok := setup("delete-all-service-instances", args, stderr, env, func(fs *flag.FlagSet) {
		ecf.flags(fs)
		fs.BoolVar(&understood, "i-understand-this-deletes-everything", false, "required: every instance of the broker is deleted, its data with it")
		fs.IntVar(&inFlight, "max-in-flight", 1, "instances deleted at once, 1 to 100")
	})
	if !ok {
		return code
	}
	if !understood {
		fmt.Fprintln(stderr, "delete-all-service-instances: refused: this deletes every service instance of the broker and its data; "+
			"run it with --i-understand-this-deletes-everything (the errand's i_understand_this_deletes_everything: true)")
		return exitUsage
	}
	if inFlight < 1 || inFlight > 100 {
		fmt.Fprintf(stderr, "delete-all-service-instances: --max-in-flight %d: want 1 to 100\n", inFlight)
		return exitUsage
	}
	client, err := ecf.client(cfg, env, log)
	if err != nil {
		fmt.Fprintf(stderr, "delete-all-service-instances: %v\n", err)
		return exitUsage
	}
	ctx, stop := ecf.context()
	defer stop()
	_, instances, err := brokerInstances(ctx, client, ecf.brokerName)
	if err != nil {
		fmt.Fprintf(stderr, "delete-all-service-instances: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "delete-all-service-instances: %d instance(s) of broker %q to delete\n", len(instances), printable(ecf.brokerName))
	failed := deleteInstances(ctx, cf.NewAdmin(client), instances, inFlight, stdout)
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "delete-all-service-instances: %d of %d instance(s) not deleted:\n", len(failed), len(instances))
		for _, f := range failed {
			fmt.Fprintf(stderr, "  %s\n", f)
		}
		return exitError
	}
	fmt.Fprintf(stdout, "delete-all-service-instances: done, %d instance(s) deleted\n", len(instances))
	return exitOK
}

// deleteInstances deletes the instances, at most inFlight at once, and
// returns a line for each that was not deleted, in the instances' order.
func deleteInstances(ctx context.Context, c *cf.Admin, instances []cf.Instance, inFlight int, out io.Writer) []string {
	var mu sync.Mutex
	lines := make([]string, len(instances))
	slots := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	for i, in := range instances {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			what := fmt.Sprintf("%s (%s) in org %s, space %s", printable(in.Name), printable(in.GUID), orDash(in.OrgName), orDash(in.SpaceName))
			err := c.DeleteServiceInstance(ctx, in.GUID)
			if errors.Is(err, cf.ErrNotFound) { // gone meanwhile: what was asked
				err = nil
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				lines[i] = what + ": " + printable(err.Error())
				return
			}
			fmt.Fprintf(out, "delete-all-service-instances: deleted %s\n", what)
		})
	}
	wg.Wait()
	var failed []string
	for _, l := range lines {
		if l != "" {
			failed = append(failed, l)
		}
	}
	return failed
}

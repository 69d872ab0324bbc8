package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/cf"
)

// registerBrokerCommand is `blacksmith register-broker --broker-url URL
// [--access PLAN=all|none]... [--org PLAN=ORG]... [--default-access
// all|none|keep] [errand cf flags] -c FILE`: the broker created in the
// Cloud Controller (or, registered already, its URL, credentials and
// catalog sent again), then each catalog plan's service access set to its
// rule. The client is the errand's own (BLACKSMITH_ERRAND_CF_CLIENT_ID and
// _SECRET); the broker's credentials are the configuration's broker.*.
// A second run changes nothing and says so. Exit 0 registered with the
// access asked, 1 the platform refused or could not be reached (each
// failure named), 2 bad flags, configuration or a rule for a plan the
// catalog lacks.
func registerBrokerCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	var ecf errandCF
	var rules accessRules
	var brokerURL string
	cfg, log, code, ok := setup("register-broker", args, stderr, env, func(fs *flag.FlagSet) {
		ecf.flags(fs)
		rules.flags(fs)
		fs.StringVar(&brokerURL, "broker-url", "", "the URL the Cloud Controller reaches the broker at (required)")
	})
	if !ok {
		return code
	}
	cat, err := catalog.Load(cfg.Catalog.Dirs...)
	if err != nil {
		fmt.Fprintf(stderr, "register-broker: loading the catalog: %v\n", err)
		return exitUsage
	}
	if u, perr := url.Parse(brokerURL); perr != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		fmt.Fprintf(stderr, "register-broker: --broker-url %q: want http(s)://host[:port], without credentials\n", printable(brokerURL))
		return exitUsage
	}
	if err := rules.check(cat.PlanIDs()); err != nil {
		fmt.Fprintf(stderr, "register-broker: %v\n", err)
		return exitUsage
	}
	client, err := ecf.client(cfg, env, log)
	if err != nil {
		fmt.Fprintf(stderr, "register-broker: %v\n", err)
		return exitUsage
	}
	ctx, stop := ecf.context()
	defer stop()
	r := registration{client: client, admin: cf.NewAdmin(client), out: stdout, spec: cf.BrokerSpec{Name: ecf.brokerName, URL: brokerURL,
		Username: cfg.Broker.Username, Password: cfg.Broker.Password}}
	if err := r.run(ctx, cat.PlanIDs(), &rules); err != nil {
		fmt.Fprintf(stderr, "register-broker: %v\n", err)
		return exitError
	}
	if r.changes == 0 {
		fmt.Fprintf(stdout, "register-broker: nothing changed: broker %q was registered at %s with this service access already\n",
			printable(r.spec.Name), printable(r.spec.URL))
		return exitOK
	}
	fmt.Fprintf(stdout, "register-broker: done, %d change(s)\n", r.changes)
	return exitOK
}

// registration is one run of register-broker.
type registration struct {
	client  *cf.Client
	admin   *cf.Admin
	out     io.Writer
	spec    cf.BrokerSpec
	changes int
}

func (r *registration) run(ctx context.Context, planIDs []string, rules *accessRules) error {
	before, err := r.broker(ctx)
	if err != nil {
		return err
	}
	plans, err := r.client.ServicePlans(ctx, r.spec.Name)
	if err != nil {
		return fmt.Errorf("reading the broker's plans: %w", err)
	}
	byID := map[string]cf.Plan{}
	for _, p := range plans {
		byID[p.CatalogID] = p
	}
	for _, id := range planIDs {
		if _, ok := byID[id]; !ok && before {
			fmt.Fprintf(r.out, "register-broker: plan %s: new in the platform's catalog\n", printable(id))
			r.changes++
		}
	}
	return r.access(ctx, planIDs, byID, rules)
}

// broker creates or updates the broker; before says whether it was there.
func (r *registration) broker(ctx context.Context) (before bool, err error) {
	cur, err := r.client.ServiceBroker(ctx, r.spec.Name)
	switch {
	case errors.Is(err, cf.ErrNotFound):
		if err := r.admin.CreateServiceBroker(ctx, r.spec); err != nil {
			return false, fmt.Errorf("creating service broker %q: %w", printable(r.spec.Name), err)
		}
		fmt.Fprintf(r.out, "register-broker: service broker %q created at %s\n", printable(r.spec.Name), printable(r.spec.URL))
		r.changes++
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading service broker %q: %w", printable(r.spec.Name), err)
	case cur.SpaceGUID != "":
		return false, fmt.Errorf("service broker %q is space-scoped (space %s): deregister it, or choose another --broker-name", printable(r.spec.Name), printable(cur.SpaceGUID))
	}
	if err := r.admin.UpdateServiceBroker(ctx, cur.GUID, r.spec); err != nil {
		return true, fmt.Errorf("updating service broker %q: %w", printable(r.spec.Name), err)
	}
	if cur.URL != r.spec.URL {
		fmt.Fprintf(r.out, "register-broker: service broker %q moved from %s to %s\n", printable(r.spec.Name), printable(cur.URL), printable(r.spec.URL))
		r.changes++
	} else {
		fmt.Fprintf(r.out, "register-broker: service broker %q is registered at %s: its credentials and catalog sent again\n",
			printable(r.spec.Name), printable(r.spec.URL))
	}
	return true, nil
}

// access sets each plan's visibility to its rule where it differs; every
// org is looked up before any plan changes.
func (r *registration) access(ctx context.Context, planIDs []string, byID map[string]cf.Plan, rules *accessRules) error {
	orgs := map[string]string{}
	if names := rules.orgNames(); len(names) > 0 {
		found, err := r.admin.Organizations(ctx, names)
		if err != nil {
			return fmt.Errorf("reading the organizations: %w", err)
		}
		for _, o := range found {
			orgs[o.Name] = o.GUID
		}
	}
	var failed []error
	for _, id := range planIDs {
		want, set, err := rules.want(id, orgs)
		if err != nil {
			return err
		}
		p, ok := byID[id]
		if !ok {
			failed = append(failed, fmt.Errorf("plan %s: not in the platform's catalog of the broker (is the broker serving this catalog?)", printable(id)))
			continue
		}
		if !set {
			continue
		}
		if err := r.plan(ctx, id, p, want); err != nil {
			failed = append(failed, err)
		}
	}
	return errors.Join(failed...)
}

// plan sets one plan's visibility to want unless it has it.
func (r *registration) plan(ctx context.Context, id string, p cf.Plan, want cf.Visibility) error {
	cur, err := r.admin.PlanVisibility(ctx, p.GUID)
	if err != nil {
		return fmt.Errorf("plan %s: reading its service access: %w", printable(id), err)
	}
	if cur.Equal(want) {
		fmt.Fprintf(r.out, "register-broker: plan %s (%s): %s, unchanged\n", printable(id), printable(p.Name), describe(cur))
		return nil
	}
	if err := r.admin.SetPlanVisibility(ctx, p.GUID, want); err != nil {
		return fmt.Errorf("plan %s: setting its service access to %s: %w", printable(id), describe(want), err)
	}
	fmt.Fprintf(r.out, "register-broker: plan %s (%s): %s, was %s\n", printable(id), printable(p.Name), describe(want), describe(cur))
	r.changes++
	return nil
}

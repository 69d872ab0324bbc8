// Command bosh-director-sim serves the BOSH Director simulator (package
// bosh/sim) until SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run parses flags, starts the simulator and serves until a signal; it
// returns the exit code: 0 after a signal, 1 when it cannot start, 2 on bad flags.
func run(args []string, stderr io.Writer) int {
	opts, verbose, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	opts.Logger = log
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := sim.New(opts)
	if err != nil {
		log.Error("bosh director simulator failed to start", "error", err)
		return 1
	}
	log.Info("bosh director simulator listening", "url", d.URL(), "auth", opts.Auth, "tls", opts.TLS,
		"ca_cert", opts.CACertPath, "seeded", opts.Seed)
	<-ctx.Done()
	log.Info("bosh director simulator stopping")
	if err := d.Close(); err != nil {
		log.Error("bosh director simulator stopped uncleanly", "error", err)
		return 1
	}
	return 0
}

// parseFlags reads the flags into simulator options; the bool is -v.
func parseFlags(args []string, stderr io.Writer) (sim.Options, bool, error) {
	var o sim.Options
	var scopes string
	fs := flag.NewFlagSet("bosh-director-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Addr, "listen", sim.DefaultAddr, "listen address")
	fs.StringVar(&o.Auth, "auth", sim.AuthBasic, `"basic" or "uaa" (built-in token endpoint POST /oauth/token)`)
	fs.StringVar(&o.Username, "user", sim.DefaultUsername, "basic-auth user")
	fs.StringVar(&o.Password, "password", sim.DefaultPassword, "basic-auth password")
	fs.StringVar(&o.ClientID, "client", sim.DefaultClientID, "UAA client id")
	fs.StringVar(&o.ClientSecret, "client-secret", sim.DefaultClientSecret, "UAA client secret")
	fs.StringVar(&scopes, "scopes", "bosh.admin", "comma-separated scopes of issued tokens")
	fs.DurationVar(&o.TokenTTL, "token-ttl", sim.DefaultTokenTTL, "UAA token lifetime")
	fs.StringVar(&o.UAAURL, "uaa-url", "", "UAA URL /info advertises (default: the simulator's own URL)")
	fs.BoolVar(&o.TLS, "tls", false, "serve HTTPS with a generated CA")
	fs.StringVar(&o.CACertPath, "ca-cert", "", "where to write the CA certificate PEM (with -tls)")
	fs.DurationVar(&o.Latency, "latency", 0, "latency added to every request")
	fs.DurationVar(&o.TaskDuration, "task-duration", sim.DefaultTaskDuration, "how long a task stays processing (negative: none)")
	fs.IntVar(&o.Workers, "workers", sim.DefaultWorkers, "tasks that run at once")
	fs.BoolVar(&o.DedicatedStatusWorker, "dedicated-status-worker", false, "the first worker takes vm-state tasks alone (director.enable_dedicated_status_worker)")
	fs.DurationVar(&o.AgentTimeout, "agent-timeout", sim.DefaultAgentTimeout, "how long a vm-state task waits for each of 3 tries of an unresponsive agent (negative: none)")
	fs.DurationVar(&o.LockTimeout, "lock-timeout", sim.DefaultLockTimeout, "how long a task waits for its deployment's lock")
	fs.IntVar(&o.Seed, "seed", 0, "deployments to create at start")
	fs.IntVar(&o.EventsKept, "events-kept", sim.DefaultEventsKept, "events GET /events can reach; older ones are dropped")
	recordEvents := fs.Bool("record-events", true, "record events (false: GET /events answers [] always, as a Director at its default)")
	fs.StringVar(&o.ExternalHost, "external-host", "", "host:port put in task redirects (default: the listen address)")
	fs.StringVar(&o.Name, "name", sim.DefaultName, "Director name in /info")
	fs.StringVar(&o.UUID, "uuid", "", "Director UUID in /info (default: random)")
	repeatableFlags(fs, &o)
	verbose := fs.Bool("v", false, "log every finished task")
	if err := fs.Parse(args); err != nil {
		return o, false, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return o, false, flag.ErrHelp
	}
	o.ClientScopes = strings.Split(scopes, ",")
	o.NoEvents = !*recordEvents
	return o, *verbose, nil
}

// repeatableFlags defines -failure, -seed-plan, -release, -stemcell,
// -errand-job and -errand, which may be given more than once.
func repeatableFlags(fs *flag.FlagSet, o *sim.Options) {
	fs.Func("release", "a release uploaded at start, NAME/VERSION; with any -release or -stemcell, deploys need theirs uploaded (repeatable)",
		func(v string) error { o.Releases = append(o.Releases, v); return nil })
	fs.Func("stemcell", "a stemcell uploaded at start, OS/VERSION, e.g. ubuntu-jammy/1.506 (repeatable)",
		func(v string) error { o.Stemcells = append(o.Stemcells, v); return nil })
	fs.Func("failure", "inject a failure, e.g. endpoint=/deployments/:name,method=GET,rate=0.1,status=503,delay=2s,count=5 (repeatable)",
		func(spec string) error {
			f, err := sim.ParseFailure(spec)
			o.Failures = append(o.Failures, f)
			return err
		})
	fs.Func("errand-job", "a job that runs as an errand wherever it is colocated, e.g. smoke-tests (repeatable)",
		func(v string) error { o.ErrandJobs = append(o.ErrandJobs, v); return nil })
	fs.Func("errand", "how an errand's runs end, e.g. errand=smoke-tests,deployment=d,exit_code=1,stdout=...,stderr=... "+
		"(repeatable; default: exit 0 with a line of stdout)",
		func(spec string) error {
			e, err := sim.ParseErrandOutcome(spec)
			o.Errands = append(o.Errands, e)
			return err
		})
	fs.Func("seed-plan", "a plan -seed draws from, e.g. service_id=redis,plan_id=redis-small,release=redis,version=16.1.0,instances=1 "+
		"(repeatable; default: redis-small, redis-large, postgresql-small)",
		func(spec string) error {
			p, err := sim.ParseSeedPlan(spec)
			o.SeedPlans = append(o.SeedPlans, p)
			return err
		})
}

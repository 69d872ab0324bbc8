// Command cc-sim serves the Cloud Controller (API v3) simulator (package
// cf/sim) until SIGINT or SIGTERM.
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

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// config is what the flags ask for beyond the simulator's options.
type config struct {
	opts   sim.Options
	seed   int
	broker string
}

// run parses flags, starts the simulator, seeds it and serves until a
// signal; it returns the exit code: 0 after a signal, 1 when it cannot
// start, 2 on bad flags.
func run(args []string, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cc, err := sim.New(cfg.opts)
	if err != nil {
		log.Error("cloud controller simulator failed to start", "error", err)
		return 1
	}
	if _, err := cc.Foundation().Seed(cfg.broker, cfg.seed); err != nil {
		log.Error("cloud controller simulator failed to seed", "error", err)
		_ = cc.Close()
		return 1
	}
	log.Info("cloud controller simulator listening", "url", cc.URL(), "uaa", cc.UAAURL(), "broker", cfg.broker, "seeded", cfg.seed)
	<-ctx.Done()
	log.Info("cloud controller simulator stopping")
	if err := cc.Close(); err != nil {
		log.Error("cloud controller simulator stopped uncleanly", "error", err)
		return 1
	}
	return 0
}

// parseFlags reads the flags.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("cc-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.opts.Addr, "listen", sim.DefaultAddr, "listen address (loopback only)")
	fs.StringVar(&c.opts.ClientID, "client-id", sim.DefaultClientID, "UAA client id")
	fs.StringVar(&c.opts.ClientSecret, "client-secret", sim.DefaultClientSecret, "UAA client secret")
	fs.DurationVar(&c.opts.TokenTTL, "token-ttl", sim.DefaultTokenTTL, "access token lifetime")
	fs.DurationVar(&c.opts.Latency, "latency", 0, "latency added to every request but /_sim")
	fs.IntVar(&c.opts.RateLimit, "rate-limit", 0, "/v3 requests allowed per -rate-limit-window (0: no limit)")
	fs.DurationVar(&c.opts.RateLimitWindow, "rate-limit-window", sim.DefaultRateLimitWindow, "rate-limit interval")
	fs.BoolVar(&c.opts.HideMarketplace, "hide-marketplace", false,
		"refuse service offerings and plans to requests without a token (hide_marketplace_from_unauthenticated_users)")
	fs.DurationVar(&c.opts.PollInterval, "poll-interval", sim.DefaultPollInterval,
		"least time between last_operation polls of a broker (broker_client_default_async_poll_interval_seconds)")
	fs.IntVar(&c.seed, "seed", 0, fmt.Sprintf("service instances created at start across the broker's plans (at most %d)", sim.MaxSeed))
	fs.StringVar(&c.broker, "broker", "blacksmith", "name of the seeded broker")
	fs.Func("failure", "inject a failure, e.g. endpoint=/v3/service_instances,rate=0.1,status=503,count=5 (repeatable)",
		func(spec string) error {
			f, err := sim.ParseFailure(spec)
			c.opts.Failures = append(c.opts.Failures, f)
			return err
		})
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return c, flag.ErrHelp
	}
	return c, nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/config"
)

// The environment variables that hold an errand's own Cloud Controller
// client: one allowed to write brokers, plan access and instances, which
// the daemon's read-only cf.client_id is not. Never a flag: a flag is seen
// in the process list.
const (
	envErrandClientID     = "BLACKSMITH_ERRAND_CF_CLIENT_ID"
	envErrandClientSecret = "BLACKSMITH_ERRAND_CF_CLIENT_SECRET"
)

// errandCF is how an errand that writes to the platform reaches the Cloud
// Controller: the configuration's cf section, overridden by flags, with
// the errand's own client credentials from the environment.
type errandCF struct {
	api, caCert, brokerName string
	skipSSL                 bool
	timeout                 time.Duration
}

// flags adds --cf-api, --cf-ca-cert, --cf-skip-ssl-validation,
// --broker-name and --timeout to fs.
func (e *errandCF) flags(fs *flag.FlagSet) {
	fs.StringVar(&e.api, "cf-api", "", "the Cloud Controller's URL (default cf.api)")
	fs.StringVar(&e.caCert, "cf-ca-cert", "", "PEM file of the CA of the Cloud Controller and its UAA (default cf.ca_cert)")
	fs.BoolVar(&e.skipSSL, "cf-skip-ssl-validation", false, "do not verify the Cloud Controller's certificate (default cf.skip_ssl_validation)")
	fs.StringVar(&e.brokerName, "broker-name", "", "the name the broker is registered under (default cf.broker_name)")
	fs.DurationVar(&e.timeout, "timeout", time.Hour, "how long the whole errand may take")
}

// client is the errand's Cloud Controller client; an error names what is
// missing (exit 2).
func (e *errandCF) client(cfg *config.Config, env func(string) (string, bool), log *slog.Logger) (*cf.Client, error) {
	if e.api == "" {
		e.api = cfg.CF.API
	}
	if e.brokerName == "" {
		e.brokerName = cfg.CF.BrokerName
	}
	if !e.skipSSL {
		e.skipSSL = cfg.CF.SkipSSLValidation
	}
	id, _ := env(envErrandClientID)
	secret, _ := env(envErrandClientSecret)
	var missing []error
	if e.api == "" {
		missing = append(missing, errors.New("no Cloud Controller: set --cf-api or cf.api"))
	}
	if e.brokerName == "" {
		missing = append(missing, errors.New("no broker name: set --broker-name or cf.broker_name"))
	}
	if id == "" || secret == "" {
		missing = append(missing, fmt.Errorf("no client of the errand's own: set %s and %s (a UAA client allowed to "+
			"write brokers and service access, e.g. with cloud_controller.admin)", envErrandClientID, envErrandClientSecret))
	}
	if err := errors.Join(missing...); err != nil {
		return nil, err
	}
	caPEM, err := e.caPEM(cfg)
	if err != nil {
		return nil, err
	}
	c, err := cf.New(cf.Options{API: e.api, ClientID: id, ClientSecret: secret, CACert: string(caPEM), SkipSSLValidation: e.skipSSL,
		Timeout: cfg.CF.Timeout, Logger: log.With("component", "cf")})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (e *errandCF) caPEM(cfg *config.Config) ([]byte, error) {
	if e.caCert == "" {
		return cfg.CF.CACertPEM()
	}
	pem, err := os.ReadFile(e.caCert)
	if err != nil {
		return nil, fmt.Errorf("reading --cf-ca-cert: %w", err)
	}
	return pem, nil
}

// context is the errand's context: cancelled by SIGTERM or SIGINT, and after --timeout.
func (e *errandCF) context() (context.Context, func()) {
	ctx, stop := signalContext()
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	return ctx, func() { cancel(); stop() }
}

// brokerInstances are the platform's managed instances of the broker's
// plans, with the plans; none when the broker is not registered.
func brokerInstances(ctx context.Context, c *cf.Client, broker string) ([]cf.Plan, []cf.Instance, error) {
	plans, err := c.ServicePlans(ctx, broker)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the broker's plans: %w", err)
	}
	var guids []string
	for _, p := range plans {
		guids = append(guids, p.GUID)
	}
	instances, err := c.ServiceInstances(ctx, guids)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the broker's instances: %w", err)
	}
	return plans, instances, nil
}

// signalContext ends on SIGTERM or SIGINT.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
}

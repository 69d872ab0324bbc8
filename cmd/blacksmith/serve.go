package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/dashboard"
	"github.com/blacksmith-reconciler/blacksmith/internal/basicauth"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/operator"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Bounds of the daemon's lifecycle.
const (
	// httpStopTimeout bounds the wait for requests in flight at shutdown.
	httpStopTimeout = 15 * time.Second
	// maxHeaderBytes bounds a request's headers (Go's default is 1 MiB).
	maxHeaderBytes = 64 << 10
	// healthTimeout bounds one /healthz answer.
	healthTimeout = 3 * time.Second
	// healthEvery is how often /healthz may reach each dependency, whatever
	// the number of probes (anyone may probe it).
	healthEvery = 2 * time.Second
	// firstRetry and maxRetry bound the backoff toward Vault and the Director at start-up.
	firstRetry, maxRetry = 500 * time.Millisecond, 30 * time.Second
)

// daemon is the running process: the HTTP server at once, the broker as soon
// as Vault answers, the reconciler as soon as the Director answers too.
type daemon struct {
	*parts
	gate   *gate
	health *health
}

// serve runs the daemon until ctx ends, then stops taking requests, lets
// the reconciler's run in progress finish (within reconciler.stop_timeout)
// and returns nil. It returns an error only when the daemon cannot run at
// all (bad catalog, address in use).
func serve(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	p, err := newParts(cfg, log)
	if err != nil {
		return err
	}
	h, err := newHealth(cfg, p)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Broker.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Broker.Listen, err)
	}
	d := &daemon{parts: p, gate: newGate(append(operatorUsers(cfg.Operator),
		basicauth.User{Username: cfg.Broker.Username, Password: cfg.Broker.Password, Role: basicauth.Admin})), health: h}
	b := cfg.Broker
	srv := &http.Server{
		Handler:           d.routes(),
		ReadHeaderTimeout: min(10*time.Second, b.ReadTimeout),
		ReadTimeout:       b.ReadTimeout,
		WriteTimeout:      b.WriteTimeout,
		IdleTimeout:       b.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelDebug),
	}
	// Shutdown calls this once the listener is closed.
	srv.RegisterOnShutdown(func() { log.Info("stopping: no new requests") })
	log.Info("blacksmith listening", "address", ln.Addr().String(), "tls", cfg.Broker.TLS.Enabled, "version", version)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.serveHTTP(gctx, srv, ln) })
	g.Go(func() error { return d.run(gctx) })
	g.Go(func() error { d.notifier.Run(gctx); return nil })
	return g.Wait()
}

// routes are /healthz, /livez and /metrics (unauthenticated unless metrics
// credentials are configured), and everything else behind the gate.
func (d *daemon) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/healthz", operator.HealthHandler(operator.Cached(d.health.checks(), healthEvery, healthTimeout, time.Now), healthTimeout,
		operatorUsers(d.cfg.Operator), d.log.With("component", "health")))
	mux.Handle("/livez", operator.LiveHandler())
	if m := d.cfg.Metrics; m.Enabled {
		mux.Handle("/metrics", operator.MetricsHandler(d.registry, m.Username, m.Password))
	}
	mux.Handle("/", d.gate)
	return mux
}

// serveHTTP serves until ctx ends, then shuts the server down: no new
// requests, those in flight get httpStopTimeout.
func (d *daemon) serveHTTP(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() {
		if t := d.cfg.Broker.TLS; t.Enabled {
			errc <- srv.ServeTLS(ln, t.Cert, t.Key)
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serving http: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), httpStopTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		d.log.Warn("requests still in flight at the stop timeout; closing them", "error", err)
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving http: %w", err)
	}
	return nil
}

// run connects to Vault (retrying), opens the broker, waits for the
// Director (retrying) and runs the reconciler until ctx ends.
func (d *daemon) run(ctx context.Context) error {
	store, err := connect(ctx, d.log, "vault", d.health.vault.set, func(ctx context.Context) (*vault.Store, error) {
		return connectVault(ctx, d.cfg)
	})
	if err != nil {
		return nil // ctx ended while waiting
	}
	defer store.Close()
	b, err := d.broker(store)
	if err != nil {
		return fmt.Errorf("creating the broker: %w", err)
	}
	m, err := d.manager(store, b)
	if err != nil {
		return fmt.Errorf("creating the reconciler: %w", err)
	}
	d.gate.open(d.api(b, m))
	d.log.Info("broker ready", "services", len(d.catalog.Services), "vault_kv_version", store.KVVersion())
	_, err = connect(ctx, d.log, "bosh director", func(error) {}, func(ctx context.Context) (struct{}, error) {
		_, err := d.directors[0].Info(ctx)
		return struct{}{}, err
	})
	if err != nil {
		return nil
	}
	parts, pctx := errgroup.WithContext(ctx) // the reconciler's loops: the lease, the runs, the watch, the fleet upgrades, the health loop
	for _, p := range m.Loops().All() {
		parts.Go(func() error { return p.Serve(pctx) })
	}
	return parts.Wait()
}

// api serves the broker's OSB API (behind the broker's credentials) and,
// next to it, the operator's endpoints (/b/reconcile, /b/instances/,
// /b/runs, /b/upgrades) and the dashboard, behind the operator's
// credentials only (operator.admin acts, operator.viewer reads; the
// broker's get 401); all counted in the broker's request metrics; any other
// path gets the broker's 404. The operator's side also refuses cross-origin
// browser requests that change anything (CSRF: the dashboard's browser holds
// the credentials).
func (d *daemon) api(b *broker.Broker, rec *reconciler.Manager) http.Handler {
	users := operatorUsers(d.cfg.Operator)
	guard := func(h http.Handler) http.Handler {
		return b.Observe(basicauth.RequireRole(users, http.NewCrossOriginProtection().Handler(h)))
	}
	log := d.log.With("component", "operator")
	mux := http.NewServeMux()
	mux.Handle("/b/reconcile", guard(operator.ReconcileHandler(rec, log)))
	mux.Handle("/b/upgrades", guard(operator.UpgradesHandler(rec.Upgrades(), log)))
	instances := guard(operator.InstancesHandler(rec.Views(), rec, log))
	mux.Handle("/b/instances/", instances)
	mux.Handle("/b/instances", guard(operator.InstanceListHandler(rec.Views().List, log)))
	mux.Handle("/b/runs", instances)
	ui := guard(dashboard.Handler())
	mux.Handle("/dashboard", ui)
	mux.Handle("/dashboard/", ui)
	mux.Handle("/", b.Handler())
	return mux
}

// connect calls f until it succeeds or ctx ends, waiting longer after each
// failure (firstRetry up to maxRetry, jittered) and logging it; report is
// told the outcome of every attempt. The error is ctx's.
func connect[T any](ctx context.Context, log *slog.Logger, what string, report func(error), f func(context.Context) (T, error)) (T, error) {
	var v T
	attempts := 0
	err := retry.Do(ctx, -1, retry.Backoff{Base: firstRetry, Limit: maxRetry},
		func(attempt int, err error, wait time.Duration) {
			log.Warn("cannot connect yet; retrying", "to", what, "attempt", attempt, "retry_in", wait, "error", err)
		},
		func(ctx context.Context) error {
			attempts++
			var err error
			v, err = f(ctx)
			report(err)
			return err
		})
	if err != nil {
		var zero T
		return zero, ctx.Err()
	}
	if attempts > 1 {
		log.Info("connected", "to", what, "attempts", attempts)
	}
	return v, nil
}

// gate answers /v2/* and /b/* with 503 (to the broker's or the operator's
// credentials, 401 otherwise) until the broker is open.
type gate struct {
	h        atomic.Pointer[http.Handler]
	starting http.Handler
}

func newGate(users []basicauth.User) *gate {
	starting := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"description":"blacksmith is starting: waiting for Vault (see /healthz)"}` + "\n"))
	})
	return &gate{starting: basicauth.RequireRole(users, starting)}
}

func (g *gate) open(h http.Handler) { g.h.Store(&h) }

// ServeHTTP hands r to the broker once it is open, else answers 503.
func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := g.h.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	g.starting.ServeHTTP(w, r)
}

// operatorUsers are the operator's credentials: the admin, and the viewer
// when one is configured.
func operatorUsers(o config.OperatorConfig) []basicauth.User {
	users := []basicauth.User{{Username: o.Admin.Username, Password: o.Admin.Password, Role: basicauth.Admin}}
	if o.Viewer.Username != "" {
		users = append(users, basicauth.User{Username: o.Viewer.Username, Password: o.Viewer.Password, Role: basicauth.Viewer})
	}
	return users
}

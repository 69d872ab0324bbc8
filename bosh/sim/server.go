package sim

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// shutdownTimeout bounds how long Close waits for requests in flight.
const shutdownTimeout = 2 * time.Second

// Director is a running BOSH Director simulator. Its methods are safe for
// concurrent use. It is the simulator's face: it starts and stops the
// server and hands each request, task and knob to the part that holds its
// resource; the parts share one store, under one mutex.
type Director struct {
	opts  Options
	log   *slog.Logger
	ln    net.Listener
	srv   *http.Server
	url   string // base URL clients use
	caPEM []byte

	ctx       context.Context // ends when the Director closes
	cancel    context.CancelFunc
	wg        sync.WaitGroup // the server and every task
	closeOnce sync.Once
	closeErr  error

	knobs     *Knobs
	faults    *Faults
	meter     *meter
	gate      *gate
	rec       *recorder
	configs   *configBook
	artifacts *artifacts
	deploys   *deploys
	board     *taskBoard
	runner    *runner
	vms       *vms
	health    *health
	blobs     *blobs
	errands   *errands
	admin     *admin
}

// New starts a Director listening on opts.Addr; it is serving on return.
func New(opts Options) (*Director, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", opts.Addr, err)
	}
	d := newDirector(opts, ln)
	if opts.TLS {
		cfg, caPEM, err := serverTLS(opts, ln.Addr().String())
		if err != nil {
			_ = ln.Close()
			return nil, err
		}
		d.ln, d.caPEM = tls.NewListener(ln, cfg), caPEM
	}
	d.SeedDeployments(opts.Seed, opts.SeedPlans)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		if err := d.srv.Serve(d.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("bosh director simulator stopped serving", "error", err)
		}
	}()
	return d, nil
}

// newDirector builds the parts around one store and wires them together.
func newDirector(opts Options, ln net.Listener) *Director {
	scheme := "http"
	if opts.TLS {
		scheme = "https"
	}
	host := ln.Addr().String()
	d := &Director{opts: opts, log: opts.Logger, ln: ln, url: scheme + "://" + host}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	db := newStore()
	db.queue = taskQueue{workers: opts.Workers, status: opts.DedicatedStatusWorker}
	db.events.kept = opts.EventsKept
	counts := &counters{}
	d.knobs, d.faults = newKnobs(opts, db), &Faults{}
	d.faults.set.Set(opts.Failures) // checked by Options.validate
	d.meter = &meter{db: db, counts: counts}
	d.gate = &gate{opts: opts, url: d.url, counts: counts, knobs: d.knobs, faults: d.faults}
	d.gate.tokens.rotate()
	d.rec = &recorder{db: db, knobs: d.knobs}
	d.configs = &configBook{db: db, rec: d.rec, gate: d.gate}
	d.artifacts = &artifacts{db: db}
	d.board = &taskBoard{db: db, knobs: d.knobs, external: scheme + "://" + or(opts.ExternalHost, host)}
	d.runner = &runner{} // the parts it runs tasks with need it too: filled in below
	d.deploys = &deploys{db: db, rec: d.rec, configs: d.configs, artifacts: d.artifacts, board: d.board,
		runner: d.runner, seedPlans: opts.SeedPlans, director: opts.Name}
	d.blobs = &blobs{db: db, deploys: d.deploys, board: d.board, runner: d.runner}
	d.errands = newErrands(opts) // checked by Options.validate
	d.errands.db, d.errands.rec, d.errands.deploys, d.errands.board, d.errands.runner, d.errands.blobs =
		db, d.rec, d.deploys, d.board, d.runner, d.blobs
	*d.runner = runner{db: db, ctx: d.ctx, wg: &d.wg, log: opts.Logger, agentTimeout: opts.AgentTimeout,
		lockTimeout: opts.LockTimeout, rec: d.rec, configs: d.configs, deploys: d.deploys, blobs: d.blobs,
		changes: &changer{db: db, rec: d.rec, configs: d.configs}, errands: d.errands}
	d.vms = &vms{db: db, deploys: d.deploys, board: d.board, runner: d.runner}
	d.health = &health{db: db, ctx: d.ctx, rec: d.rec, deploys: d.deploys, board: d.board, runner: d.runner}
	d.admin = &admin{db: db, knobs: d.knobs, faults: d.faults, meter: d.meter, gate: d.gate, configs: d.configs,
		deploys: d.deploys, board: d.board, health: d.health, errands: d.errands}
	d.artifacts.preload(opts.Releases, opts.Stemcells) // validated
	d.srv = &http.Server{
		Handler:           d.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return d.ctx },
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelDebug),
	}
	return d
}

// URL is the Director's base URL, e.g. "https://127.0.0.1:43125".
func (d *Director) URL() string { return d.url }

// CACertPEM is the PEM of the CA that signed the server certificate; nil
// without TLS.
func (d *Director) CACertPEM() []byte { return d.caPEM }

// Close stops serving, ends running tasks where they stand and waits for
// every goroutine of the Director. It is safe to call more than once.
func (d *Director) Close() error {
	d.closeOnce.Do(func() {
		d.cancel()
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		// Shutdown waits for every connection to go idle, and net/http counts a
		// connection that was accepted but never sent a request (a client's
		// surplus dial) as busy for 5 s; past the bound, close them all.
		if err := d.srv.Shutdown(ctx); err != nil {
			if cerr := d.srv.Close(); cerr != nil {
				d.closeErr = fmt.Errorf("shutting down the director simulator: %w", errors.Join(err, cerr))
			}
		}
		d.wg.Wait()
	})
	return d.closeErr
}

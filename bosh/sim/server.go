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
// concurrent use.
type Director struct {
	opts     Options
	log      *slog.Logger
	ln       net.Listener
	srv      *http.Server
	url      string // base URL clients use
	external string // base URL the Director puts in Location headers
	caPEM    []byte

	ctx       context.Context // ends when the Director closes
	cancel    context.CancelFunc
	wg        sync.WaitGroup // the server and every task
	closeOnce sync.Once
	closeErr  error

	knobs  knobs
	counts counters
	tokens signer

	mu    sync.RWMutex
	queue taskQueue // under mu
	store
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
		cfg, err := d.setupTLS()
		if err != nil {
			_ = ln.Close()
			return nil, err
		}
		d.ln = tls.NewListener(ln, cfg)
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

func newDirector(opts Options, ln net.Listener) *Director {
	scheme := "http"
	if opts.TLS {
		scheme = "https"
	}
	host := ln.Addr().String()
	d := &Director{
		opts:     opts,
		log:      opts.Logger,
		ln:       ln,
		url:      scheme + "://" + host,
		external: scheme + "://" + or(opts.ExternalHost, host),
		store:    newStore(),
		queue:    taskQueue{workers: opts.Workers, status: opts.DedicatedStatusWorker},
	}
	d.events.kept = opts.EventsKept
	d.uploads, _ = parseUploads(opts.Releases, opts.Stemcells) // validated
	if d.uploads != nil {
		up := *d.uploads
		for name, versions := range up.releases {
			for _, v := range versions {
				d.uploadReleaseLocked(name, v)
			}
		}
		for os, versions := range up.stemcells {
			for _, v := range versions {
				d.uploadStemcellLocked(os, v)
			}
		}
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.knobs.init(opts)
	d.knobs.setFailures(opts.Failures) // checked by Options.validate
	d.tokens.rotate()
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

package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// shutdownTimeout bounds how long Close waits for requests in flight.
const shutdownTimeout = 2 * time.Second

// CC is a running Cloud Controller simulator: its foundation (Foundation),
// the knobs tests turn (Knobs), and the server that answers the API from
// them. Its methods are safe for concurrent use.
type CC struct {
	opts Options
	url  string
	ln   net.Listener
	srv  *http.Server

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	knobs  *Knobs // latency, token lifetime, rate limit, injected failures
	counts counters
	tokens tokens

	foundation *Foundation     // orgs, spaces, brokers, offerings, plans and instances, and their lock
	api        *api            // the routes that read the foundation
	brokers    *brokerWrites   // the broker writes and their jobs
	instances  *instanceWrites // the service instance writes, run as jobs of the same runner
	keys       *keyWrites      // the service key routes, run as jobs of the same runner
	apps       *appRoutes      // the apps, as far as a binding needs one
}

// New starts a CC listening on opts.Addr; it is serving on return.
func New(opts Options) (*CC, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", opts.Addr, err)
	}
	url := "http://" + ln.Addr().String()
	c := &CC{opts: opts, url: url, ln: ln, knobs: newKnobs(opts), foundation: newFoundation()}
	c.api = &api{f: c.foundation, url: url, quota: newUUID(), hideMarketplace: opts.HideMarketplace}
	c.brokers = &brokerWrites{f: c.foundation, api: c.api, jobs: newJobs(c.foundation, url), client: newBrokerClient(url)}
	orphans := newOrphanMitigator(c.brokers.client, c.brokers.jobs, opts.ClientID)
	c.instances = &instanceWrites{f: c.foundation, api: c.api, jobs: c.brokers.jobs, runner: &instanceRunner{
		f: c.foundation, client: c.brokers.client, user: opts.ClientID, interval: opts.PollInterval, orphans: orphans}}
	c.keys = &keyWrites{f: c.foundation, api: c.api, jobs: c.brokers.jobs, runner: &keyRunner{
		f: c.foundation, client: c.brokers.client, user: opts.ClientID, interval: opts.PollInterval, orphans: orphans}}
	c.instances.keys = c.keys
	c.apps = &appRoutes{f: c.foundation, api: c.api}
	c.tokens.init()
	c.srv = &http.Server{Handler: c.routes(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: maxHeaderBytes}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_ = c.srv.Serve(ln) // ends with ErrServerClosed on Close
	}()
	return c, nil
}

// Foundation is the simulated foundation, which tests set up in Go.
func (c *CC) Foundation() *Foundation { return c.foundation }

// Knobs are the settings tests turn at run time (latency, token lifetime,
// rate limit, failures).
func (c *CC) Knobs() *Knobs { return c.knobs }

// URL is the API's base URL, e.g. "http://127.0.0.1:41234".
func (c *CC) URL() string { return c.url }

// UAAURL is the URL of the built-in UAA (the root document's links.uaa).
func (c *CC) UAAURL() string { return c.url + UAAPrefix }

// Close stops serving and waits for the server to end. It is safe to call
// more than once.
func (c *CC) Close() error {
	c.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := c.srv.Shutdown(ctx); err != nil {
			if cerr := c.srv.Close(); cerr != nil {
				c.closeErr = fmt.Errorf("shutting down the cloud controller simulator: %w", errors.Join(err, cerr))
			}
		}
		c.wg.Wait()
		c.brokers.jobs.stop()
	})
	return c.closeErr
}

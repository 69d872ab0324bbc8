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

// CC is a running Cloud Controller simulator. Its methods are safe for
// concurrent use.
type CC struct {
	opts Options
	ln   net.Listener
	srv  *http.Server

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	knobs  // latency, token lifetime, injected failures
	counts counters
	tokens tokens
	limit  limiter

	store // the foundation's orgs, spaces, brokers, offerings, plans and instances, and their lock
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
	c := &CC{opts: opts, ln: ln, store: newStore("http://" + ln.Addr().String())}
	c.knobs.init(opts)
	c.tokens.init()
	c.limit.limit, c.limit.window = opts.RateLimit, opts.RateLimitWindow
	c.srv = &http.Server{Handler: c.routes(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: maxHeaderBytes}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_ = c.srv.Serve(ln) // ends with ErrServerClosed on Close
	}()
	return c, nil
}

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
	})
	return c.closeErr
}

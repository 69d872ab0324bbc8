package httpkit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Options configures a Conn. Defaults are filled in by New.
type Options struct {
	// CACert is the PEM text of the CA that signed the servers'
	// certificates. Default: the system's roots.
	CACert string
	// SkipSSLValidation turns certificate verification off. Default false.
	SkipSSLValidation bool
	// Timeout bounds each request, its answer read included. Default 0: none
	// but the caller's context.
	Timeout time.Duration
	// MaxInFlight bounds the requests Send has in flight, and the idle
	// connections kept to one host. Default 10.
	MaxInFlight int
	// Proxy picks the proxy a request goes through, as http.Transport's
	// Proxy does. Default nil: none, requests go straight to the server.
	Proxy func(*http.Request) (*url.URL, error)
	// Count is told of each request sent: its method, its route template
	// as the caller named it, and the status of its answer (0: none).
	// Default nil: not counted.
	Count func(method, endpoint string, status int)
}

// Conn sends requests over one *http.Client. It is safe for concurrent use.
type Conn struct {
	http  *http.Client
	slots chan struct{}
	count func(method, endpoint string, status int)
}

// Answer is an answer read whole.
type Answer struct {
	Status int         // the HTTP status, e.g. 200
	Header http.Header // the answer's headers
	Body   []byte      // the whole body, at most the bound Send was given
}

// ErrNoPEM is returned by New when Options.CACert holds no PEM certificate.
var ErrNoPEM = errors.New("no PEM certificate")

// New returns a Conn. It does no I/O.
func New(o Options) (*Conn, error) {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 10
	}
	if o.Count == nil {
		o.Count = func(string, string, int) {}
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.SkipSSLValidation} //nolint:gosec // only when configured
	if o.CACert != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(o.CACert)) {
			return nil, ErrNoPEM
		}
		cfg.RootCAs = pool
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = cfg
	transport.Proxy = o.Proxy
	transport.MaxIdleConnsPerHost = o.MaxInFlight
	return &Conn{
		http: &http.Client{
			Transport: transport,
			Timeout:   o.Timeout,
			// A redirect is the caller's to follow or refuse: its Location may
			// name a host this machine cannot, or must not, reach.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		slots: make(chan struct{}, o.MaxInFlight),
		count: o.Count,
	}, nil
}

// Send waits for one of the MaxInFlight slots, then sends req as RoundTrip
// does. A slot not free before ctx ends is an error matching ErrNoSlot and
// ctx's error.
func (c *Conn) Send(ctx context.Context, req *http.Request, endpoint string, limit int64) (Answer, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return Answer{}, fmt.Errorf("%w: %w", ErrNoSlot, ctx.Err())
	}
	defer func() { <-c.slots }()
	return c.RoundTrip(req, endpoint, limit)
}

// RoundTrip sends req without waiting for a slot, counts it under endpoint
// and reads the whole answer, at most limit bytes of it. An answer over
// limit is a *TooLargeError and is not read further; any other error means
// no answer, or one cut short.
func (c *Conn) RoundTrip(req *http.Request, endpoint string, limit int64) (Answer, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		c.count(req.Method, endpoint, 0)
		return Answer{}, err
	}
	defer resp.Body.Close()
	c.count(req.Method, endpoint, resp.StatusCode)
	if resp.ContentLength > limit {
		return Answer{}, &TooLargeError{Method: req.Method, Endpoint: endpoint, Limit: limit}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return Answer{}, fmt.Errorf("reading the answer: %w", err)
	}
	if int64(len(body)) > limit {
		return Answer{}, &TooLargeError{Method: req.Method, Endpoint: endpoint, Limit: limit}
	}
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

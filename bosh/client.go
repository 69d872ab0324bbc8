package bosh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpkit"
	"golang.org/x/time/rate"
)

// Options configures a Client. Defaults are filled in by New.
type Options struct {
	// Name names the Director in metrics, logs and errors. Default "default".
	Name string
	// Address is the Director's base URL, e.g. "https://127.0.0.1:25555". Required;
	// task redirects are always sent here, whatever host their Location names.
	Address string
	// Username and Password are used when the Director's /info says basic auth.
	// No default.
	Username, Password string
	// ClientID and ClientSecret are UAA client credentials, used when the
	// Director's /info says uaa. No default.
	ClientID, ClientSecret string
	// CACert is the PEM text of the CA that signed the Director's (and UAA's)
	// certificate. Default: the system's roots.
	CACert string
	// SkipSSLValidation turns certificate verification off. Default false.
	SkipSSLValidation bool
	// Timeout bounds each HTTP request, the UAA token request included. Default 30s.
	Timeout time.Duration
	// RateLimit is the number of requests per second sent to the Director.
	// Default 0: unlimited.
	RateLimit float64
	// RateBurst is the rate limiter's burst. Default 10.
	RateBurst int
	// MaxInFlight bounds the requests in flight toward the Director. Default 10.
	MaxInFlight int
	// Metrics receives the client's counters. Default nil: not counted.
	Metrics *Metrics
	// Logger receives the client's logs. Default slog.Default().
	Logger *slog.Logger
}

// Client talks to one BOSH Director. It is safe for concurrent use. Its
// methods are the Director's endpoints; the connection under them (conn)
// sends the requests.
type Client struct{ conn *conn }

// conn is the HTTP layer of a Client: the requests, their authentication
// (basic or UAA, detected from /info), the rate limit and the in-flight cap,
// the bounded answers, the metrics.
type conn struct {
	name    string
	base    *url.URL
	opts    Options
	kit     *httpkit.Conn // the *http.Client, the in-flight cap, the bounded answers
	limiter *rate.Limiter // nil: unlimited
	metrics *Metrics
	log     *slog.Logger

	auth     atomic.Value  // authenticator, unset until /info was read
	authLock chan struct{} // one detection at a time, context-aware
}

// New validates opts and returns a client. It does no network I/O: the
// authentication type is read from GET /info on first use, and read again on
// later calls for as long as the Director could not be reached.
func New(opts Options) (*Client, error) {
	opts = withDefaults(opts)
	base, err := validate(opts)
	if err != nil {
		return nil, err
	}
	c := &conn{
		name:     opts.Name,
		base:     base,
		opts:     opts,
		metrics:  opts.Metrics,
		log:      opts.Logger.With("director", opts.Name),
		authLock: make(chan struct{}, 1),
	}
	c.kit, err = httpkit.New(httpkit.Options{
		CACert:            opts.CACert,
		SkipSSLValidation: opts.SkipSSLValidation,
		Timeout:           opts.Timeout,
		MaxInFlight:       opts.MaxInFlight,
		Proxy:             http.ProxyFromEnvironment,
		Count: func(method, endpoint string, status int) {
			c.metrics.request(c.name, method, endpoint, status)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("bosh director %q: invalid options: ca_cert holds %w", opts.Name, err)
	}
	if opts.RateLimit > 0 {
		c.limiter = rate.NewLimiter(rate.Limit(opts.RateLimit), opts.RateBurst)
	}
	c.metrics.init(c.name)
	return &Client{conn: c}, nil
}

// Name returns the Director's name given in Options.Name.
func (c *Client) Name() string { return c.conn.name }

// withDefaults fills in the defaults documented on Options.
func withDefaults(o Options) Options {
	if o.Name == "" {
		o.Name = "default"
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	if o.RateBurst == 0 {
		o.RateBurst = 10
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = 10
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// validate checks opts (with defaults) and returns the parsed address.
func validate(o Options) (*url.URL, error) {
	var problems []error
	base, err := url.Parse(strings.TrimSuffix(o.Address, "/"))
	switch {
	case o.Address == "":
		problems = append(problems, errors.New("address is required"))
	case err != nil:
		problems = append(problems, fmt.Errorf("address %q: want https://host:port: %w", o.Address, err))
	case base.Scheme != "https" && base.Scheme != "http", base.Host == "":
		problems = append(problems, fmt.Errorf("address %q: want https://host:port", o.Address))
	case base.Path != "" || base.RawQuery != "":
		problems = append(problems, fmt.Errorf("address %q: must have no path or query", o.Address))
	}
	if (o.Username == "" || o.Password == "") && (o.ClientID == "" || o.ClientSecret == "") {
		problems = append(problems, errors.New("credentials: a username and password or a UAA client id and secret are required"))
	}
	if o.Timeout < 0 || o.RateLimit < 0 || o.RateBurst < 0 || o.MaxInFlight < 0 {
		problems = append(problems, errors.New("timeout, rate limit, rate burst and max in flight must not be negative"))
	}
	if err := errors.Join(problems...); err != nil {
		return nil, fmt.Errorf("bosh director %q: invalid options: %w", o.Name, err)
	}
	return base, nil
}

type contextIDKey struct{}

// WithContextID returns a context whose requests carry X-Bosh-Context-Id: id,
// which tags the tasks they create. The Director refuses an id longer than
// 64 characters with a 400 (code 190024), which the call returns as an *APIError.
func WithContextID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, contextIDKey{}, id)
}

// contextID returns the id set by WithContextID, or "".
func contextID(ctx context.Context) string {
	id, _ := ctx.Value(contextIDKey{}).(string)
	return id
}

package cf

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpkit"
	"github.com/blacksmith-reconciler/blacksmith/internal/uaa"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults filled in by New for zero Options fields.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxInFlight  = 10
	DefaultPerPage      = 5000
	DefaultMaxPageBytes = 64 << 20
	DefaultJobPoll      = time.Second
	// MaxPages bounds the pages one list call follows: 1000 pages of 5000
	// are 5 million instances, far more than one broker has.
	MaxPages = 1000
)

// Options configures a Client.
type Options struct {
	// API is the Cloud Controller's base URL, e.g. "https://api.sys.example.com". Required.
	API string
	// ClientID and ClientSecret are the UAA client's credentials. Required.
	ClientID, ClientSecret string
	// CACert is the PEM text of the CA that signed the API's and UAA's
	// certificates. Default: the system's roots.
	CACert string
	// SkipSSLValidation turns certificate verification off. Default false.
	SkipSSLValidation bool
	// Timeout bounds each HTTP request. Default 30s.
	Timeout time.Duration
	// MaxInFlight bounds the requests in flight. Default 10.
	MaxInFlight int
	// PerPage is the per_page of list requests, 1..5000. Default 5000.
	PerPage int
	// MaxPageBytes bounds one answer of the API. Default 64 MiB.
	MaxPageBytes int64
	// Registerer receives blacksmith_cf_requests_total. Default nil: not registered.
	Registerer prometheus.Registerer
	// Logger receives the client's logs. Default slog.Default().
	Logger *slog.Logger
	// JobPoll is how often a job of a write (a broker's registration, an
	// instance's delete) is polled. Default 1s.
	JobPoll time.Duration
	// Now tells the time a UAA token is due by. Default time.Now.
	Now func() time.Time
}

// Client reads one Cloud Controller, and writes the few things an
// operator's errand writes (brokers, plan visibility, instance deletes). It is safe for concurrent use.
type Client struct {
	api      *url.URL
	opts     Options
	kit      *httpkit.Conn // the *http.Client, the in-flight cap, the bounded answers
	requests *prometheus.CounterVec
	sent     atomic.Int64 // requests sent, the UAA's included
	log      *slog.Logger

	uaaMu  sync.Mutex
	uaaURL string // token URL, found on first use

	tokens *uaa.Source // the client's UAA token, fetched through send
}

// Requests is how many requests the client sent so far, to the Cloud
// Controller and its UAA.
func (c *Client) Requests() int64 { return c.sent.Load() }

// New validates opts and returns a client. It does no network I/O.
func New(opts Options) (*Client, error) {
	opts = withDefaults(opts)
	api, err := validate(opts)
	if err != nil {
		return nil, err
	}
	c := &Client{
		api:      api,
		opts:     opts,
		requests: newRequestsMetric(opts.Registerer),
		log:      opts.Logger,
	}
	c.kit, err = httpkit.New(httpkit.Options{
		CACert:            opts.CACert,
		SkipSSLValidation: opts.SkipSSLValidation,
		Timeout:           opts.Timeout,
		MaxInFlight:       opts.MaxInFlight,
		Count:             c.count, // no Proxy: one from the environment would dial elsewhere
	})
	if err != nil {
		return nil, fmt.Errorf("cloud controller: invalid options: ca_cert holds %w", err)
	}
	c.tokens = uaa.NewSource(c.fetchToken, "cloud controller", opts.Logger, opts.Now)
	return c, nil
}

func withDefaults(o Options) Options {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.PerPage == 0 {
		o.PerPage = DefaultPerPage
	}
	if o.MaxPageBytes == 0 {
		o.MaxPageBytes = DefaultMaxPageBytes
	}
	if o.JobPoll <= 0 {
		o.JobPoll = DefaultJobPoll
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func validate(o Options) (*url.URL, error) {
	var problems []error
	api, err := url.Parse(strings.TrimSuffix(o.API, "/"))
	switch {
	case o.API == "":
		problems = append(problems, errors.New("api is required"))
	case err != nil:
		problems = append(problems, fmt.Errorf("api %q: want https://host[:port]: %w", o.API, err))
	case api.Scheme != "https" && api.Scheme != "http", api.Host == "":
		problems = append(problems, fmt.Errorf("api %q: want https://host[:port]", o.API))
	case api.Path != "" || api.RawQuery != "" || api.User != nil:
		problems = append(problems, fmt.Errorf("api %q: must have no path, query or user", o.API))
	}
	if o.ClientID == "" || o.ClientSecret == "" {
		problems = append(problems, errors.New("a client id and secret are required"))
	}
	if o.Timeout < 0 || o.MaxInFlight < 0 || o.MaxPageBytes < 0 {
		problems = append(problems, errors.New("timeout, max in flight and max page bytes must not be negative"))
	}
	if o.PerPage < 1 || o.PerPage > 5000 {
		problems = append(problems, fmt.Errorf("per page %d: want 1..5000", o.PerPage))
	}
	if err := errors.Join(problems...); err != nil {
		return nil, fmt.Errorf("cloud controller: invalid options: %w", err)
	}
	return api, nil
}

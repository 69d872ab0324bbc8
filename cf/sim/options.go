package sim

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Defaults filled in by New for zero Options fields.
const (
	DefaultAddr            = "127.0.0.1:0"
	DefaultClientID        = "blacksmith-cc"
	DefaultClientSecret    = "secret"
	DefaultTokenTTL        = 10 * time.Minute
	DefaultRateLimitWindow = time.Hour
	// UAAPrefix is the path under which the simulator serves its UAA.
	UAAPrefix = "/uaa"
	// LoginPrefix is the path the root document names as the login server.
	LoginPrefix = "/login"
	// APIVersion is the v3 API version the root document advertises.
	APIVersion = "3.190.0"
)

// ErrBadOptions is returned by New (and the knob setters) for options the
// simulator cannot serve.
var ErrBadOptions = errors.New("bad simulator options")

// Options configures a CC. The zero value serves on a free loopback port.
type Options struct {
	// Addr is the listen address; it must be a loopback address. Default
	// "127.0.0.1:0" (a free loopback port).
	Addr string
	// ClientID and ClientSecret are the client credentials the built-in UAA
	// accepts (HTTP basic auth or form fields). Default "blacksmith-cc"/"secret".
	ClientID, ClientSecret string
	// TokenTTL is the lifetime of issued tokens, rounded up to whole seconds.
	// Default 10m.
	TokenTTL time.Duration
	// Latency is added to every request except the /_sim admin API. Default 0.
	Latency time.Duration
	// Failures are injected from the start (see InjectFailure). Default none.
	Failures []Failure
	// RateLimit is how many /v3 requests a client may make per
	// RateLimitWindow before it is answered 429. Default 0: no limit and no
	// X-RateLimit-* headers.
	RateLimit int
	// RateLimitWindow is the rate-limit interval. Default 1h (the Cloud
	// Controller's default interval).
	RateLimitWindow time.Duration
	// HideMarketplace refuses the service offerings and plans to a request
	// without a token, as the Cloud Controller's
	// hide_marketplace_from_unauthenticated_users does. Default false: they
	// answer anyone, as the Cloud Controller does by default.
	HideMarketplace bool
	// PollInterval is the least time between two last_operation polls of
	// an instance's broker (Retry-After may lengthen it, up to CC's 24h).
	// Default 60s (broker_client_default_async_poll_interval_seconds).
	PollInterval time.Duration
}

// withDefaults fills in every default; it is the only place defaults live.
func (o Options) withDefaults() Options {
	o.Addr = or(o.Addr, DefaultAddr)
	o.ClientID = or(o.ClientID, DefaultClientID)
	o.ClientSecret = or(o.ClientSecret, DefaultClientSecret)
	if o.TokenTTL <= 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.RateLimitWindow <= 0 {
		o.RateLimitWindow = DefaultRateLimitWindow
	}
	return o
}

// validate refuses options the simulator cannot serve as asked.
func (o Options) validate() error {
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("%w: listen address %q: %v", ErrBadOptions, o.Addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%w: listen address %q is not loopback", ErrBadOptions, o.Addr)
	}
	switch {
	case o.Latency < 0:
		return fmt.Errorf("%w: latency %v is negative", ErrBadOptions, o.Latency)
	case o.RateLimit < 0:
		return fmt.Errorf("%w: rate limit %d is negative", ErrBadOptions, o.RateLimit)
	}
	for _, f := range o.Failures {
		if err := checkFailure(&f); err != nil {
			return err
		}
	}
	return nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Package discover stands in for github.com/hashicorp/go-discover in this
// development build of Vault. Vault's core uses that module only for the
// cloud auto-join of Raft clusters (retry_join's auto_join), which a dev
// server with in-memory storage never does; its providers bring in the SDKs
// of fourteen clouds and Kubernetes, the larger part of what a Vault build
// compiles. Here there are no providers: a lookup says so.
package discover

import (
	"errors"
	"fmt"
	"log"
	"sort"
	"strings"
)

// Provider looks up addresses in a cloud environment.
type Provider interface {
	Addrs(args map[string]string, l *log.Logger) ([]string, error)
	Help() string
}

// Providers is empty: this build discovers nothing.
var Providers = map[string]Provider{}

// Discover looks up addresses with its providers.
type Discover struct {
	providers map[string]Provider
}

// Option configures a Discover.
type Option func(*Discover) error

// New returns a Discover with the options applied.
func New(opts ...Option) (*Discover, error) {
	d := &Discover{providers: map[string]Provider{}}
	for _, opt := range opts {
		if err := opt(d); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// WithUserAgent is accepted and ignored.
func WithUserAgent(string) Option { return func(*Discover) error { return nil } }

// WithProviders sets the providers.
func WithProviders(m map[string]Provider) Option {
	return func(d *Discover) error { d.providers = m; return nil }
}

// Names lists the providers' names.
func (d *Discover) Names() []string {
	var names []string
	for n := range d.providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Help says what this build can discover: nothing.
func (d *Discover) Help() string {
	return "cloud auto-join is not part of this development build of Vault"
}

// ErrNotBuilt is what every lookup answers.
var ErrNotBuilt = errors.New("cloud auto-join is not part of this development build of Vault")

// Addrs checks the configuration and answers ErrNotBuilt.
func (d *Discover) Addrs(cfg string, _ *log.Logger) ([]string, error) {
	c, err := Parse(cfg)
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("provider %q: %w", c["provider"], ErrNotBuilt)
}

// Config is a parsed auto-join configuration: key=value pairs.
type Config map[string]string

// Parse reads "key=value key=value" pairs; a value may be double-quoted.
func Parse(s string) (Config, error) {
	c := Config{}
	for rest := strings.TrimSpace(s); rest != ""; rest = strings.TrimSpace(rest) {
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("invalid format: %q", rest)
		}
		key := rest[:eq]
		rest = rest[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote in %q", s)
			}
			val, rest = rest[1:end+1], rest[end+2:]
		} else {
			end := strings.IndexAny(rest, " \t")
			if end < 0 {
				end = len(rest)
			}
			val, rest = rest[:end], rest[end:]
		}
		c[key] = val
	}
	return c, nil
}

// String gives the pairs back, sorted by key.
func (c Config) String() string {
	var keys []string
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%q", k, c[k])
	}
	return b.String()
}

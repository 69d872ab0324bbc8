package bosh

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// authenticator sets a request's credentials.
type authenticator interface {
	// authorize sets req's Authorization header and returns the credential
	// it used, to be passed to expire if the Director refuses it.
	authorize(ctx context.Context, req *http.Request) (string, error)
	// expire forgets credential after a 401 and reports whether sending the
	// request again with a new credential may succeed.
	expire(credential string) bool
}

// basicAuth sends the configured username and password.
type basicAuth struct{ username, password string }

func (b basicAuth) authorize(_ context.Context, req *http.Request) (string, error) {
	req.SetBasicAuth(b.username, b.password)
	return "", nil
}

func (basicAuth) expire(string) bool { return false }

// authenticator returns the Director's authenticator, reading GET /info the
// first time and every time until it succeeds.
func (c *conn) authenticator(ctx context.Context) (authenticator, error) {
	if a, ok := c.auth.Load().(authenticator); ok {
		return a, nil
	}
	select {
	case c.authLock <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("bosh director %q: detecting authentication: %w", c.name, ctx.Err())
	}
	defer func() { <-c.authLock }()
	if a, ok := c.auth.Load().(authenticator); ok {
		return a, nil // detected while this call waited
	}
	info, err := c.info(ctx)
	if err != nil {
		return nil, fmt.Errorf("detecting authentication: %w", err)
	}
	a, err := c.newAuthenticator(info.UserAuthentication.Type, info.UserAuthentication.Options.URL)
	if err != nil {
		return nil, err
	}
	c.auth.Store(a)
	c.log.Debug("bosh authentication detected", "type", info.UserAuthentication.Type)
	return a, nil
}

// newAuthenticator picks the authenticator for the type that /info names.
func (c *conn) newAuthenticator(kind, uaaURL string) (authenticator, error) {
	o := c.opts
	switch kind {
	case "basic":
		if o.Username == "" || o.Password == "" {
			return nil, fmt.Errorf("bosh director %q uses basic auth but no username and password are configured: %w", c.name, ErrUnauthorized)
		}
		return basicAuth{username: o.Username, password: o.Password}, nil
	case "uaa":
		if o.ClientID == "" || o.ClientSecret == "" {
			return nil, fmt.Errorf("bosh director %q uses UAA but no client id and secret are configured: %w", c.name, ErrUnauthorized)
		}
		if uaaURL == "" {
			return nil, fmt.Errorf("bosh director %q uses UAA but its /info gives no UAA url", c.name)
		}
		tokenURL := strings.TrimSuffix(uaaURL, "/") + "/oauth/token"
		if reason := untrustedTokenURL(c.base, tokenURL); reason != "" {
			return nil, fmt.Errorf("bosh director %q: %w at %s: %s", c.name, ErrUntrustedUAA, quote(tokenURL), reason)
		}
		return newUAAAuth(c, tokenURL), nil
	default:
		return nil, fmt.Errorf("bosh director %q: unknown authentication type %q in /info", c.name, kind)
	}
}

// untrustedTokenURL says why the client secret must not be sent to
// tokenURL, or "" when it may be. GET /info is read without credentials, so
// whoever answers it (or stands between the client and the Director) may name
// any URL: only https toward a named host is trusted, and, for tests, plain
// http toward exactly the Director's own scheme and host:port when the
// configured address is plain http on a loopback host.
func untrustedTokenURL(director *url.URL, tokenURL string) string {
	u, err := url.Parse(tokenURL)
	switch {
	case err != nil:
		return "it is not a URL"
	case u.Scheme != "https" && u.Scheme != "http":
		return "the token URL must be https"
	case u.Hostname() == "":
		return "it names no host"
	case u.Scheme == "https":
		return ""
	case director.Scheme != "http" || !loopback(director.Hostname()):
		return "the token URL must be https"
	case u.Host != director.Host:
		return fmt.Sprintf("the token URL must be https, or plain http toward the Director's own loopback address %s", director.Host)
	}
	return ""
}

// loopback says whether host is localhost or a loopback address
// (127.0.0.0/8, ::1): nothing outside this machine answers it.
func loopback(host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return strings.EqualFold(host, "localhost")
}

package bosh

import (
	"context"
	"fmt"
	"net/http"
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
func (c *Client) authenticator(ctx context.Context) (authenticator, error) {
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
	info, err := c.Info(ctx)
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
func (c *Client) newAuthenticator(kind, uaaURL string) (authenticator, error) {
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
		return newUAAAuth(c, strings.TrimSuffix(uaaURL, "/")+"/oauth/token"), nil
	default:
		return nil, fmt.Errorf("bosh director %q: unknown authentication type %q in /info", c.name, kind)
	}
}

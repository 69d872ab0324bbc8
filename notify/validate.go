package notify

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"
)

// withDefaults fills in the defaults documented on Options.
func withDefaults(o Options) Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.QueueSize == 0 {
		o.QueueSize = 1000
	}
	if o.Attempts == 0 {
		o.Attempts = 8
	}
	if o.Backoff.Base == 0 {
		o.Backoff.Base = time.Second
	}
	if o.Backoff.Limit == 0 {
		o.Backoff.Limit = 5 * time.Minute
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	return o
}

// validate checks opts (with defaults), reporting every problem at once,
// and returns the webhooks' parsed URLs.
func validate(o Options) ([]*url.URL, error) {
	var problems []error
	if o.QueueSize < 0 || o.Attempts < 0 || o.Timeout < 0 || o.Backoff.Base < 0 || o.Backoff.Limit < 0 {
		problems = append(problems, errors.New("queue size, attempts, timeout and backoff must not be negative"))
	}
	urls := make([]*url.URL, len(o.Webhooks))
	for i, w := range o.Webhooks {
		u, err := parseURL(w.URL)
		if err != nil {
			problems = append(problems, fmt.Errorf("webhooks[%d].url: %w", i, err))
		}
		urls[i] = u
		for j, t := range w.Events {
			if !slices.Contains(Types, t) {
				problems = append(problems, fmt.Errorf("webhooks[%d].events[%d]: unknown event type %q (known: %s)",
					i, j, t, strings.Join(Types, ", ")))
			}
		}
		if w.Secret == "" {
			problems = append(problems, fmt.Errorf("webhooks[%d].secret: required (the HMAC-SHA256 key that signs each delivery)", i))
		}
	}
	if err := errors.Join(problems...); err != nil {
		return nil, fmt.Errorf("webhook notifier: invalid options: %w", err)
	}
	return urls, nil
}

// parseURL accepts an absolute http or https URL with a host, without user
// info or fragment. Its errors never quote the URL, whose query may hold a
// token.
func parseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("required")
	}
	u, err := url.Parse(raw)
	var uerr *url.Error
	switch {
	case errors.As(err, &uerr):
		return nil, fmt.Errorf("not a URL: %w", uerr.Err)
	case err != nil:
		return nil, errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("want an http:// or https:// URL")
	case u.Hostname() == "":
		return nil, errors.New("has no host")
	case u.User != nil:
		return nil, errors.New("must not hold user info: deliveries are signed with the secret")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, errors.New("must not have a fragment")
	}
	return u, nil
}

package bosh

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/uaa"
)

// uaaAuth sends UAA client-credential tokens, held by internal/uaa (one
// fetch at a time, renewed before they expire, kept while a renewal
// fails), fetched through the client's own HTTP layer.
type uaaAuth struct {
	c        *conn
	tokenURL string
	src      *uaa.Source
}

func newUAAAuth(c *conn, tokenURL string) *uaaAuth {
	u := &uaaAuth{c: c, tokenURL: tokenURL}
	u.src = uaa.NewSource(u.fetch, fmt.Sprintf("bosh director %q", c.name), c.log, nil)
	return u
}

func (u *uaaAuth) authorize(ctx context.Context, req *http.Request) (string, error) {
	t, err := u.src.Token(ctx)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", t.Kind+" "+t.Value)
	return t.Value, nil
}

// expire forgets value unless another request has replaced it already.
func (u *uaaAuth) expire(value string) bool {
	u.src.Drop(value)
	return true
}

// fetch asks UAA for a client-credentials token.
func (u *uaaAuth) fetch(ctx context.Context) (uaa.Answer, time.Time, error) {
	start := time.Now()
	req, err := uaa.Request(ctx, u.tokenURL, u.c.opts.ClientID, u.c.opts.ClientSecret)
	if err != nil {
		return uaa.Answer{}, start, fmt.Errorf("bosh director %q: UAA token request: %w", u.c.name, err)
	}
	res, err := u.c.roundTrip(req, epToken)
	if err != nil {
		return uaa.Answer{}, start, fmt.Errorf("bosh director %q: getting a UAA token from %s: %w", u.c.name, u.tokenURL, err)
	}
	if res.status != http.StatusOK {
		return uaa.Answer{}, start, u.refused(res)
	}
	a, err := parseToken(res.body)
	if err != nil {
		return uaa.Answer{}, start, fmt.Errorf("bosh director %q: UAA %s answered no usable token: %w", u.c.name, u.tokenURL, err)
	}
	return a, start, nil
}

// tokenAnswer is UAA's answer to a client-credentials token request.
type tokenAnswer = uaa.Answer

// parseToken decodes UAA's answer to a token request (uaa.Parse, with the
// client's bounded decoder).
func parseToken(body []byte) (tokenAnswer, error) { return uaa.Parse(body, decodeJSON) }

// refused turns UAA's refusal into an error; bad client credentials match ErrUnauthorized.
func (u *uaaAuth) refused(res response) error {
	code, desc := uaa.Refusal(res.body)
	if res.status == http.StatusUnauthorized || (res.status == http.StatusBadRequest && code == "invalid_client") {
		return fmt.Errorf("bosh director %q: UAA %s refused client %q (%s %s): %w",
			u.c.name, u.tokenURL, u.c.opts.ClientID, shorten(code), shorten(desc), ErrUnauthorized)
	}
	return fmt.Errorf("bosh director %q: UAA %s answered status %d: %s %s",
		u.c.name, u.tokenURL, res.status, shorten(code), shorten(desc))
}

// tokenKind is the Authorization scheme for a token_type; UAA says "bearer".
func tokenKind(tokenType string) string { return uaa.Kind(tokenType) }

// tokenTimes are when a token fetched at start, living expiresIn seconds,
// is renewed and when it expires.
func tokenTimes[N int | int64](start time.Time, expiresIn N) (renew, expires time.Time) {
	return uaa.Times(start, int64(expiresIn))
}

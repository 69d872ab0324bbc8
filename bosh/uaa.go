package bosh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Token lifetimes: a token is renewed when a fifth of its lifetime (at most
// maxRefreshMargin) is left; a token without expires_in is taken to live
// defaultTokenLifetime. When a renewal fails, the held token is used until
// it expires, and the renewal tried again after renewRetry.
const (
	maxRefreshMargin     = 30 * time.Second
	defaultTokenLifetime = 60 * time.Second
	renewRetry           = time.Second
)

// uaaAuth sends UAA client-credential tokens. One goroutine at a time
// fetches a token; the others wait for it (or for their context).
type uaaAuth struct {
	c        *conn
	tokenURL string
	lock     chan struct{} // held while a token is fetched

	mu  sync.Mutex
	tok uaaToken
}

// uaaToken is a token, the time to renew it and the time it expires.
type uaaToken struct {
	value, kind        string
	renewAt, expiresAt time.Time
}

func newUAAAuth(c *conn, tokenURL string) *uaaAuth {
	return &uaaAuth{c: c, tokenURL: tokenURL, lock: make(chan struct{}, 1)}
}

func (u *uaaAuth) authorize(ctx context.Context, req *http.Request) (string, error) {
	t, err := u.token(ctx)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", t.kind+" "+t.value)
	return t.value, nil
}

// expire forgets value unless another request has replaced it already.
func (u *uaaAuth) expire(value string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.tok.value == value {
		u.tok = uaaToken{}
	}
	return true
}

// current returns the token held, if it need not be renewed yet.
func (u *uaaAuth) current() (uaaToken, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.tok, u.tok.value != "" && time.Now().Before(u.tok.renewAt)
}

// token returns a valid token, fetching one when none is held or the held
// one is due for renewal.
func (u *uaaAuth) token(ctx context.Context) (uaaToken, error) {
	if t, ok := u.current(); ok {
		return t, nil
	}
	select {
	case u.lock <- struct{}{}:
	case <-ctx.Done():
		return uaaToken{}, fmt.Errorf("bosh director %q: waiting for a UAA token: %w", u.c.name, ctx.Err())
	}
	defer func() { <-u.lock }()
	if t, ok := u.current(); ok {
		return t, nil // fetched while this call waited
	}
	t, err := u.fetch(ctx)
	if err != nil {
		return u.keepAfterFailure(ctx, err)
	}
	u.mu.Lock()
	u.tok = t
	u.mu.Unlock()
	return t, nil
}

// keepAfterFailure returns the held token when it has not expired yet, so
// that a UAA outage shorter than the token's remaining life does not fail
// Director calls; the renewal is tried again after renewRetry. Otherwise it
// returns err.
func (u *uaaAuth) keepAfterFailure(ctx context.Context, err error) (uaaToken, error) {
	now := time.Now()
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.tok.value == "" || !now.Before(u.tok.expiresAt) || ctx.Err() != nil {
		return uaaToken{}, err
	}
	u.tok.renewAt = now.Add(min(renewRetry, u.tok.expiresAt.Sub(now)))
	u.c.log.Warn("bosh uaa token renewal failed, using the current token until it expires",
		"error", err, "expires_in", u.tok.expiresAt.Sub(now).Round(time.Second))
	return u.tok, nil
}

// fetch asks UAA for a client-credentials token.
func (u *uaaAuth) fetch(ctx context.Context) (uaaToken, error) {
	start := time.Now()
	form := url.Values{"grant_type": {"client_credentials"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.tokenURL, strings.NewReader(form))
	if err != nil {
		return uaaToken{}, fmt.Errorf("bosh director %q: UAA token request: %w", u.c.name, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(u.c.opts.ClientID, u.c.opts.ClientSecret)
	res, err := u.c.roundTrip(req, epToken)
	if err != nil {
		return uaaToken{}, fmt.Errorf("bosh director %q: getting a UAA token from %s: %w", u.c.name, u.tokenURL, err)
	}
	if res.status != http.StatusOK {
		return uaaToken{}, u.refused(res)
	}
	a, err := parseToken(res.body)
	if err != nil {
		return uaaToken{}, fmt.Errorf("bosh director %q: UAA %s answered no usable token: %w", u.c.name, u.tokenURL, err)
	}
	u.c.log.Debug("bosh uaa token fetched", "expires_in", a.ExpiresIn)
	renew, expires := tokenTimes(start, a.ExpiresIn)
	return uaaToken{value: a.AccessToken, kind: tokenKind(a.TokenType), renewAt: renew, expiresAt: expires}, nil
}

// tokenAnswer is UAA's answer to a client-credentials token request.
type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
}

// parseToken decodes UAA's answer to a token request. The access token and
// its type go into an Authorization header: they must be printable ASCII
// without spaces, as UAA's are.
func parseToken(body []byte) (tokenAnswer, error) {
	var a tokenAnswer
	if err := decodeJSON(body, &a); err != nil {
		return tokenAnswer{}, fmt.Errorf("decoding the answer: %w", err)
	}
	switch {
	case a.AccessToken == "":
		return tokenAnswer{}, errors.New("the answer has no access_token")
	case !headerToken(a.AccessToken):
		return tokenAnswer{}, errors.New("the access_token holds a space, a control or a non-ASCII character")
	case !headerToken(a.TokenType) && a.TokenType != "":
		return tokenAnswer{}, errors.New("the token_type holds a space, a control or a non-ASCII character")
	}
	return a, nil
}

// headerToken says whether s is non-empty printable ASCII without spaces.
func headerToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) < 0
}

// refused turns UAA's refusal into an error; bad client credentials match ErrUnauthorized.
func (u *uaaAuth) refused(res response) error {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(res.body, &e)
	if res.status == http.StatusUnauthorized || (res.status == http.StatusBadRequest && e.Error == "invalid_client") {
		return fmt.Errorf("bosh director %q: UAA %s refused client %q (%s %s): %w",
			u.c.name, u.tokenURL, u.c.opts.ClientID, shorten(e.Error), shorten(e.Description), ErrUnauthorized)
	}
	return fmt.Errorf("bosh director %q: UAA %s answered status %d: %s %s",
		u.c.name, u.tokenURL, res.status, shorten(e.Error), shorten(e.Description))
}

// tokenKind is the Authorization scheme for a token_type; UAA says "bearer".
func tokenKind(tokenType string) string {
	if tokenType == "" {
		return "bearer"
	}
	return tokenType
}

// tokenTimes are when a token fetched at start, living expiresIn seconds,
// is renewed and when it expires.
func tokenTimes(start time.Time, expiresIn int) (renew, expires time.Time) {
	life := time.Duration(expiresIn) * time.Second
	if life <= 0 {
		life = defaultTokenLifetime
	}
	return start.Add(life - min(life/5, maxRefreshMargin)), start.Add(life)
}

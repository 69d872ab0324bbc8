package uaa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Token lifetimes: a token is renewed when a fifth of its lifetime (at most
// MaxRefreshMargin) is left; a token without expires_in is taken to live
// DefaultLifetime. When a renewal fails, the held token is used until it
// expires, and the renewal tried again after RenewRetry.
const (
	MaxRefreshMargin = 30 * time.Second
	DefaultLifetime  = 60 * time.Second
	RenewRetry       = time.Second
)

// Token is a token held: its value and Authorization scheme, when to renew
// it and when it expires.
type Token struct {
	Value, Kind        string
	RenewAt, ExpiresAt time.Time
}

// Fetch asks UAA for a token through its caller's HTTP layer (its limits,
// metrics and errors); start is when the request was sent.
type Fetch func(ctx context.Context) (a Answer, start time.Time, err error)

// Source holds a client's token: one goroutine at a time fetches one, the
// others wait for it (or for their context); a renewal that fails leaves
// the held token in use until it expires; Drop forgets a token its server
// refused.
type Source struct {
	fetch Fetch
	what  string // names the client in errors and logs, e.g. `bosh director "lab"`
	log   *slog.Logger
	now   func() time.Time
	lock  chan struct{} // held while a token is fetched

	mu  sync.Mutex
	tok Token
}

// NewSource is a source of the tokens fetch gets; now tells the time a
// token is due by (nil: time.Now), the clock fetch's start comes from.
func NewSource(fetch Fetch, what string, log *slog.Logger, now func() time.Time) *Source {
	if log == nil {
		log = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	return &Source{fetch: fetch, what: what, log: log, now: now, lock: make(chan struct{}, 1)}
}

// Token returns a valid token, fetching one when none is held or the held
// one is due for renewal.
func (s *Source) Token(ctx context.Context) (Token, error) {
	if t, ok := s.current(); ok {
		return t, nil
	}
	select {
	case s.lock <- struct{}{}:
	case <-ctx.Done():
		return Token{}, fmt.Errorf("%s: waiting for a UAA token: %w", s.what, ctx.Err())
	}
	defer func() { <-s.lock }()
	if t, ok := s.current(); ok {
		return t, nil // fetched while this call waited
	}
	a, start, err := s.fetch(ctx)
	if err != nil {
		return s.keepAfterFailure(ctx, err)
	}
	renew, expires := Times(start, a.ExpiresIn)
	t := Token{Value: a.AccessToken, Kind: Kind(a.TokenType), RenewAt: renew, ExpiresAt: expires}
	s.mu.Lock()
	s.tok = t
	s.mu.Unlock()
	s.log.Debug("uaa token fetched", "client", s.what, "expires_in", a.ExpiresIn)
	return t, nil
}

// Drop forgets value unless another request has replaced it already.
func (s *Source) Drop(value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok.Value == value {
		s.tok = Token{}
	}
}

// current returns the token held, if it need not be renewed yet.
func (s *Source) current() (Token, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tok, s.tok.Value != "" && s.now().Before(s.tok.RenewAt)
}

// keepAfterFailure returns the held token when it has not expired yet, so
// that a UAA outage shorter than the token's remaining life fails no call;
// the renewal is tried again after RenewRetry. Otherwise it returns err.
func (s *Source) keepAfterFailure(ctx context.Context, err error) (Token, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok.Value == "" || !now.Before(s.tok.ExpiresAt) || ctx.Err() != nil {
		return Token{}, err
	}
	s.tok.RenewAt = now.Add(min(RenewRetry, s.tok.ExpiresAt.Sub(now)))
	s.log.Warn("uaa token renewal failed, using the current token until it expires", "client", s.what,
		"error", err, "expires_in", s.tok.ExpiresAt.Sub(now).Round(time.Second))
	return s.tok, nil
}

// Request is the client-credentials token request to tokenURL.
func Request(ctx context.Context, tokenURL, clientID, secret string) (*http.Request, error) {
	form := url.Values{"grant_type": {"client_credentials"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(form))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(clientID, secret)
	return req, nil
}

// Answer is UAA's answer to a token request.
type Answer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// Parse decodes UAA's answer to a token request with decode (the caller's
// bounded JSON decoder; nil: encoding/json). The access token and its type
// go into an Authorization header: they must be printable ASCII without
// spaces, as UAA's are.
func Parse(body []byte, decode func([]byte, any) error) (Answer, error) {
	if decode == nil {
		decode = json.Unmarshal
	}
	var a Answer
	if err := decode(body, &a); err != nil {
		return Answer{}, fmt.Errorf("decoding the answer: %w", err)
	}
	switch {
	case a.AccessToken == "":
		return Answer{}, errors.New("the answer has no access_token")
	case !HeaderToken(a.AccessToken):
		return Answer{}, errors.New("the access_token holds a space, a control or a non-ASCII character")
	case !HeaderToken(a.TokenType) && a.TokenType != "":
		return Answer{}, errors.New("the token_type holds a space, a control or a non-ASCII character")
	}
	return a, nil
}

// HeaderToken says whether s is non-empty printable ASCII without spaces.
func HeaderToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) < 0
}

// Refusal is the error and its description in UAA's refusal body (empty
// when it has none).
func Refusal(body []byte) (code, description string) {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error, e.Description
}

// Kind is the Authorization scheme for a token_type; UAA says "bearer".
func Kind(tokenType string) string {
	if tokenType == "" {
		return "bearer"
	}
	return tokenType
}

// Times are when a token fetched at start, living expiresIn seconds, is
// renewed and when it expires.
func Times(start time.Time, expiresIn int64) (renew, expires time.Time) {
	life := time.Duration(expiresIn) * time.Second
	if expiresIn <= 0 || expiresIn > 1<<31 {
		life = DefaultLifetime
	}
	return start.Add(life - min(life/5, MaxRefreshMargin)), start.Add(life)
}

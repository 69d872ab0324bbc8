package cf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Token lifetimes: renewed when a fifth of its life (at most 30s) is left;
// a token without expires_in is taken to live a minute.
const (
	maxRefreshMargin     = 30 * time.Second
	defaultTokenLifetime = time.Minute
)

type token struct {
	value   string
	renewAt time.Time
}

// token returns a held token that is not due, or fetches one (one goroutine at a time).
func (c *Client) token(ctx context.Context) (string, error) {
	if t, ok := c.current(); ok {
		return t, nil
	}
	select {
	case c.tokLock <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("cloud controller: waiting for a UAA token: %w", ctx.Err())
	}
	defer func() { <-c.tokLock }()
	if t, ok := c.current(); ok {
		return t, nil
	}
	t, err := c.fetchToken(ctx)
	if err != nil {
		return "", err
	}
	c.tokMu.Lock()
	c.tok = t
	c.tokMu.Unlock()
	return t.value, nil
}

func (c *Client) current() (string, bool) {
	c.tokMu.Lock()
	defer c.tokMu.Unlock()
	return c.tok.value, c.tok.value != "" && time.Now().Before(c.tok.renewAt)
}

// dropToken forgets value unless another request has replaced it already.
func (c *Client) dropToken(value string) {
	c.tokMu.Lock()
	defer c.tokMu.Unlock()
	if c.tok.value == value {
		c.tok = token{}
	}
}

// fetchToken asks UAA for a client_credentials token.
func (c *Client) fetchToken(ctx context.Context) (token, error) {
	tokenURL, err := c.tokenURL(ctx)
	if err != nil {
		return token{}, err
	}
	start := time.Now()
	form := url.Values{"grant_type": {"client_credentials"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(form))
	if err != nil {
		return token{}, fmt.Errorf("cloud controller: UAA token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(c.opts.ClientID, c.opts.ClientSecret)
	res, err := c.send(ctx, req, epToken, smallAnswer)
	if err != nil {
		return token{}, err
	}
	if res.status != http.StatusOK {
		return token{}, uaaRefused(res)
	}
	a, err := ParseToken(res.body)
	if err != nil {
		return token{}, &unavailable{fmt.Errorf("cloud controller: UAA %s answered no usable token: %w", tokenURL, err)}
	}
	life := time.Duration(a.ExpiresIn) * time.Second
	if a.ExpiresIn <= 0 || a.ExpiresIn > 1<<31 {
		life = defaultTokenLifetime
	}
	return token{value: a.AccessToken, renewAt: start.Add(life - min(life/5, maxRefreshMargin))}, nil
}

// TokenAnswer is UAA's answer to a token request.
type TokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// ParseToken decodes a token answer; the token must be printable ASCII
// without spaces (it goes into a header) and of type bearer.
func ParseToken(body []byte) (TokenAnswer, error) {
	var a TokenAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return TokenAnswer{}, errors.New(clean(err.Error()))
	}
	switch {
	case a.AccessToken == "" || strings.IndexFunc(a.AccessToken, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		return TokenAnswer{}, errors.New("the access_token is empty or not printable ASCII")
	case a.TokenType != "" && !strings.EqualFold(a.TokenType, "bearer"):
		return TokenAnswer{}, fmt.Errorf("token_type %q is not bearer", clean(a.TokenType))
	}
	return a, nil
}

// uaaRefused turns UAA's refusal into an error; 400/401 match ErrUnauthorized.
func uaaRefused(res response) error {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(res.body, &e)
	err := fmt.Errorf("cloud controller: UAA answered status %d: %s %s", res.status, clean(e.Error), clean(e.Description))
	switch {
	case res.status == http.StatusUnauthorized || res.status == http.StatusBadRequest || res.status == http.StatusForbidden:
		return fmt.Errorf("%w: %w", err, ErrUnauthorized)
	case res.status >= 500:
		return &unavailable{err}
	}
	return err
}

package cf

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/uaa"
)

// token returns the UAA token held (internal/uaa: renewed before it
// expires, kept while a renewal fails), fetching one when due.
func (c *Client) token(ctx context.Context) (string, error) {
	t, err := c.tokens.Token(ctx)
	return t.Value, err
}

// dropToken forgets value unless another request has replaced it already.
func (c *Client) dropToken(value string) { c.tokens.Drop(value) }

// fetchToken asks UAA for a client_credentials token.
func (c *Client) fetchToken(ctx context.Context) (uaa.Answer, time.Time, error) {
	start := c.opts.Now()
	tokenURL, err := c.tokenURL(ctx)
	if err != nil {
		return uaa.Answer{}, start, err
	}
	req, err := uaa.Request(ctx, tokenURL, c.opts.ClientID, c.opts.ClientSecret)
	if err != nil {
		return uaa.Answer{}, start, fmt.Errorf("cloud controller: UAA token request: %w", err)
	}
	res, err := c.send(ctx, req, epToken, smallAnswer)
	if err != nil {
		return uaa.Answer{}, start, err
	}
	if res.status != http.StatusOK {
		return uaa.Answer{}, start, uaaRefused(res)
	}
	a, err := ParseToken(res.body)
	if err != nil {
		return uaa.Answer{}, start, &unavailable{fmt.Errorf("cloud controller: UAA %s answered no usable token: %w", tokenURL, err)}
	}
	return a, start, nil
}

// TokenAnswer is UAA's answer to a token request.
type TokenAnswer = uaa.Answer

// ParseToken decodes a token answer (uaa.Parse); the token must be of type
// bearer (or say none), as the Cloud Controller takes them.
func ParseToken(body []byte) (TokenAnswer, error) {
	a, err := uaa.Parse(body, nil)
	switch {
	case err != nil:
		return TokenAnswer{}, errors.New(clean(err.Error()))
	case a.TokenType != "" && !strings.EqualFold(a.TokenType, "bearer"):
		return TokenAnswer{}, fmt.Errorf("token_type %q is not bearer", clean(a.TokenType))
	}
	return a, nil
}

// uaaRefused turns UAA's refusal into an error; 400/401 match ErrUnauthorized.
func uaaRefused(res response) error {
	code, desc := uaa.Refusal(res.body)
	err := fmt.Errorf("cloud controller: UAA answered status %d: %s %s", res.status, clean(code), clean(desc))
	switch {
	case res.status == http.StatusUnauthorized || res.status == http.StatusBadRequest || res.status == http.StatusForbidden:
		return fmt.Errorf("%w: %w", err, ErrUnauthorized)
	case res.status >= 500:
		return &unavailable{err}
	}
	return err
}

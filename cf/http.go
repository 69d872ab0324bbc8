package cf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpkit"
)

// smallAnswer bounds GET / and a token answer.
const smallAnswer = 1 << 20

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// get sends GET u with a token and returns a 2xx answer; any other is an
// *APIError. A 401 CF-InvalidAuthToken renews the token and asks once more.
func (c *Client) get(ctx context.Context, endpoint string, u *url.URL) (response, error) {
	return c.do(ctx, http.MethodGet, endpoint, u, nil)
}

// do sends method u with a token (and body as JSON when not nil) and
// returns a 2xx answer; any other is an *APIError. A 401
// CF-InvalidAuthToken renews the token and asks once more.
func (c *Client) do(ctx context.Context, method, endpoint string, u *url.URL, body []byte) (response, error) {
	for retried := false; ; retried = true {
		tok, err := c.token(ctx)
		if err != nil {
			return response{}, err
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
		if err != nil {
			return response{}, fmt.Errorf("cloud controller: %s %s: %w", method, endpoint, err)
		}
		req.Header.Set("Authorization", "bearer "+tok)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := c.send(ctx, req, endpoint, c.opts.MaxPageBytes)
		if err != nil {
			return response{}, err
		}
		if res.status < 300 {
			return res, nil
		}
		apiErr := ParseAPIError(endpoint, res.status, res.header, res.body)
		apiErr.Method = method
		if res.status == http.StatusUnauthorized && apiErr.Code == CodeInvalidAuthToken && !retried {
			c.log.Debug("cloud controller refused the token, renewing it", "endpoint", endpoint)
			c.dropToken(tok)
			continue
		}
		return res, apiErr
	}
}

// send waits for a free slot, sends req, reads the answer up to limit and
// counts it (httpkit.Conn.Send).
func (c *Client) send(ctx context.Context, req *http.Request, endpoint string, limit int64) (response, error) {
	a, err := c.kit.Send(ctx, req, endpoint, limit)
	var big *httpkit.TooLargeError
	switch {
	case err == nil:
		return response{status: a.Status, header: a.Header, body: a.Body}, nil
	case errors.Is(err, httpkit.ErrNoSlot):
		return response{}, fmt.Errorf("cloud controller: %s %s: %w", req.Method, endpoint, err)
	case ctx.Err() != nil: // the caller gave up: not the platform's fault
		return response{}, fmt.Errorf("cloud controller: %s %s: %w", req.Method, endpoint, ctx.Err())
	case errors.As(err, &big):
		return response{}, fmt.Errorf("cloud controller: %w", &tooLarge{big})
	}
	return response{}, &unavailable{fmt.Errorf("cloud controller: %s %s: %w", req.Method, endpoint, err)}
}

// count counts one request sent (status 0: no answer).
func (c *Client) count(_, endpoint string, status int) {
	c.sent.Add(1)
	c.requests.WithLabelValues(endpoint, httpkit.CodeClass(status)).Inc()
}

// decode decodes a 2xx answer; an undecodable one leaves the view unknown.
func decode(endpoint string, body []byte, out any) error {
	if err := httpkit.DecodeJSON(body, out); err != nil {
		return &unavailable{fmt.Errorf("cloud controller: GET %s: undecodable answer: %s", endpoint, clean(err.Error()))}
	}
	return nil
}

// sameOrigin says whether u has the API's scheme and host (port included).
func (c *Client) sameOrigin(u *url.URL) bool {
	return u.Scheme == c.api.Scheme && hostPort(u) == hostPort(c.api) && u.User == nil
}

// hostPort is u's lower-cased host with its port, the scheme's default when none is given.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

package cf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
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

// send waits for a free slot, sends req, reads the answer up to limit and counts it.
func (c *Client) send(ctx context.Context, req *http.Request, endpoint string, limit int64) (response, error) {
	select {
	case c.inFlight <- struct{}{}:
	case <-ctx.Done():
		return response{}, fmt.Errorf("cloud controller: %s %s: waiting for a request slot: %w", req.Method, endpoint, ctx.Err())
	}
	defer func() { <-c.inFlight }()
	res, err := c.roundTrip(req, endpoint, limit)
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil: // the caller gave up: not the platform's fault
		return response{}, fmt.Errorf("cloud controller: %s %s: %w", req.Method, endpoint, ctx.Err())
	case errors.Is(err, ErrAnswerTooLarge):
		return response{}, fmt.Errorf("cloud controller: %w", err)
	}
	return response{}, &unavailable{fmt.Errorf("cloud controller: %s %s: %w", req.Method, endpoint, err)}
}

func (c *Client) roundTrip(req *http.Request, endpoint string, limit int64) (response, error) {
	c.sent.Add(1)
	resp, err := c.http.Do(req)
	if err != nil {
		c.requests.WithLabelValues(endpoint, "error").Inc()
		return response{}, err
	}
	defer resp.Body.Close()
	c.requests.WithLabelValues(endpoint, codeClass(resp.StatusCode)).Inc()
	if resp.ContentLength > limit {
		return response{}, &tooLarge{endpoint: endpoint, limit: limit}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return response{}, fmt.Errorf("reading the answer: %w", err)
	}
	if int64(len(body)) > limit {
		return response{}, &tooLarge{endpoint: endpoint, limit: limit}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// decode decodes a 2xx answer; an undecodable one leaves the view unknown.
func decode(endpoint string, body []byte, out any) error {
	if err := json.Unmarshal(body, out); err != nil {
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

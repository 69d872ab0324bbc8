package bosh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxBody bounds an answer read into memory.
const maxBody = 64 << 20

// request is one call to the Director.
type request struct {
	method      string
	path        string     // escaped, e.g. "/deployments/redis-1"
	query       url.Values // may be nil
	endpoint    string     // route template for metrics, e.g. "/deployments/:name"
	body        []byte     // sent again on a retry
	contentType string
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends r with the Director's credentials and returns a 2xx or 3xx answer;
// any other answer is an *APIError. A 401 in UAA mode renews the token and
// sends r once more, body included.
func (c *Client) do(ctx context.Context, r request) (response, error) {
	auth, err := c.authenticator(ctx)
	if err != nil {
		return response{}, err
	}
	for retried := false; ; retried = true {
		req, err := c.newRequest(ctx, r)
		if err != nil {
			return response{}, err
		}
		credential, err := auth.authorize(ctx, req)
		if err != nil {
			return response{}, err
		}
		res, err := c.send(ctx, req, r.endpoint)
		if err != nil {
			return response{}, err
		}
		if res.status == http.StatusUnauthorized && !retried && auth.expire(credential) {
			c.log.Debug("bosh director refused the token, renewing it", "endpoint", r.endpoint)
			continue
		}
		if res.status >= 400 {
			return res, parseAPIError(c.name, r.method, r.path, res.status, res.body)
		}
		return res, nil
	}
}

// newRequest builds r toward the configured address, with a fresh body.
func (c *Client) newRequest(ctx context.Context, r request) (*http.Request, error) {
	u, err := url.Parse(c.base.String() + r.path)
	if err != nil {
		return nil, fmt.Errorf("bosh director %q: %s %s: %w", c.name, r.method, r.path, err)
	}
	u.RawQuery = r.query.Encode()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("bosh director %q: %s %s: %w", c.name, r.method, r.path, err)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if id := contextID(ctx); id != "" {
		req.Header.Set("X-Bosh-Context-Id", id)
	}
	return req, nil
}

// send waits for the rate limiter and a free slot, then sends req.
func (c *Client) send(ctx context.Context, req *http.Request, endpoint string) (response, error) {
	fail := func(err error) (response, error) {
		return response{}, fmt.Errorf("bosh director %q: %s %s: %w", c.name, req.Method, req.URL.Path, err)
	}
	if c.limiter != nil {
		if err := c.limiter.Wait(ctx); err != nil {
			if ctx.Err() == nil { // the wait would outlast the deadline
				err = fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
			}
			return fail(fmt.Errorf("waiting for the rate limit: %w", err))
		}
	}
	select {
	case c.inFlight <- struct{}{}:
	case <-ctx.Done():
		return fail(fmt.Errorf("waiting for a free request slot: %w", ctx.Err()))
	}
	defer func() { <-c.inFlight }()
	res, err := c.roundTrip(req, endpoint)
	if err != nil {
		return fail(err)
	}
	return res, nil
}

// roundTrip sends req, reads the whole answer and counts it.
func (c *Client) roundTrip(req *http.Request, endpoint string) (response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		c.metrics.request(c.name, req.Method, endpoint, 0)
		return response{}, err
	}
	defer resp.Body.Close()
	c.metrics.request(c.name, req.Method, endpoint, resp.StatusCode)
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return response{}, fmt.Errorf("reading the answer: %w", err)
	}
	if len(body) > maxBody {
		return response{}, fmt.Errorf("answer longer than %d bytes", maxBody)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// errNotTaskRedirect is returned when a task-creating request is not answered
// with a redirect to /tasks/:id.
var errNotTaskRedirect = errors.New("expected a redirect to /tasks/:id")

// taskID reads the task id from a task redirect. Only the path of its
// Location counts: the host, which may be unreachable from here, is
// replaced by the configured address.
func taskID(res response) (int, error) {
	if res.status != http.StatusFound && res.status != http.StatusSeeOther {
		return 0, fmt.Errorf("%w, got status %d", errNotTaskRedirect, res.status)
	}
	loc, err := url.Parse(res.header.Get("Location"))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errNotTaskRedirect, err)
	}
	rest, ok := strings.CutPrefix(loc.Path, "/tasks/")
	id, err := strconv.Atoi(rest)
	if !ok || err != nil || id <= 0 {
		return 0, fmt.Errorf("%w, got Location %q", errNotTaskRedirect, loc.String())
	}
	return id, nil
}

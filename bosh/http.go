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

	"github.com/blacksmith-reconciler/blacksmith/internal/httpkit"
)

// Bounds on an answer read into memory; a longer answer is an error
// (matching ErrAnswerTooLarge), never cut short. Each is far above what a
// Director writes, so that only a broken or hostile answer meets it, and
// bounds the memory MaxInFlight answers can take.
const (
	// smallAnswer bounds GET /info, a UAA token, GET /tasks/:id, the answer
	// to a task-creating request and an error answer: a few KB at most. 1 MiB.
	smallAnswer = 1 << 20
	// manifestAnswer bounds GET /deployments/:name, a manifest (a few MB at
	// most) written as a JSON string. 16 MiB.
	manifestAnswer = 16 << 20
	// listingAnswer bounds GET /deployments, /tasks, /deployments/:name/vms
	// and /instances, /releases and /stemcells (every version uploaded,
	// with its jobs or the deployments using it), and a task's event log:
	// 10,000 deployments with a few releases each are about 3 MB, the
	// simulator's 100,000 with one release each 14 MB. 32 MiB.
	listingAnswer = 32 << 20
	// eventsAnswer bounds GET /events: at most 200 events of a few hundred
	// bytes each, a deploy's releases and stemcells in its context
	// included. 8 MiB, 40 KiB an event.
	eventsAnswer = 8 << 20
)

// answerLimit is the bound on the answer to a request, by method and route
// template; error answers are read with the same bound.
func answerLimit(method, endpoint string) int64 {
	if method == http.MethodPost && endpoint == epDiff {
		return manifestAnswer // two manifests' lines
	}
	if method != http.MethodGet {
		return smallAnswer
	}
	switch endpoint {
	case epDeployment:
		return manifestAnswer
	case epDeployments, epTasks, epVMs, epInstances, epTaskOutput, epReleases, epStemcells:
		return listingAnswer
	case epEvents:
		return eventsAnswer
	}
	return smallAnswer
}

// tooLargeError is an answer over its bound.
type tooLargeError struct{ *httpkit.TooLargeError }

// Error names the request and the bound, e.g. "the Director's answer to GET
// /deployments is over 32 MiB".
func (e *tooLargeError) Error() string {
	from := "the Director's"
	if e.Endpoint == epToken {
		from = "UAA's"
	}
	return fmt.Sprintf("%s answer to %s %s is over %d MiB", from, e.Method, e.Endpoint, e.Limit>>20)
}

// Is lets errors.Is match ErrAnswerTooLarge.
func (e *tooLargeError) Is(target error) bool { return target == ErrAnswerTooLarge }

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
func (c *conn) do(ctx context.Context, r request) (response, error) {
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
func (c *conn) newRequest(ctx context.Context, r request) (*http.Request, error) {
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
func (c *conn) send(ctx context.Context, req *http.Request, endpoint string) (response, error) {
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
	res, err := answer(c.kit.Send(ctx, req, endpoint, answerLimit(req.Method, endpoint)))
	switch {
	case err == nil:
		return res, nil
	case errors.Is(err, httpkit.ErrNoSlot), errors.Is(err, ErrAnswerTooLarge):
		return fail(err)
	}
	return fail(&unreachable{err})
}

// roundTrip sends req without waiting for the rate limiter or a slot, reads
// the whole answer up to its bound (see answerLimit) and counts it.
func (c *conn) roundTrip(req *http.Request, endpoint string) (response, error) {
	return answer(c.kit.RoundTrip(req, endpoint, answerLimit(req.Method, endpoint)))
}

// answer is a as a response, an answer over its bound a *tooLargeError.
func answer(a httpkit.Answer, err error) (response, error) {
	var big *httpkit.TooLargeError
	if errors.As(err, &big) {
		return response{}, &tooLargeError{big}
	}
	return response{status: a.Status, header: a.Header, body: a.Body}, err
}

// decodeJSON decodes body into out (httpkit.DecodeJSON: its error is cut to
// maxErrorText bytes).
func decodeJSON(body []byte, out any) error { return httpkit.DecodeJSON(body, out) }

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
	location := res.header.Get("Location")
	loc, err := url.Parse(location)
	if err != nil {
		return 0, fmt.Errorf("%w, got Location %s, which is not a URL", errNotTaskRedirect, quote(location))
	}
	rest, ok := strings.CutPrefix(loc.Path, "/tasks/")
	id, err := strconv.Atoi(rest)
	if !ok || err != nil || id <= 0 {
		return 0, fmt.Errorf("%w, got Location %s", errNotTaskRedirect, quote(loc.String()))
	}
	return id, nil
}

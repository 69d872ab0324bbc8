package cf

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpkit"
	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
)

var (
	// ErrNotFound is matched by a 404 answer and by a broker that is not there.
	ErrNotFound = errors.New("not found")
	// ErrUnavailable is matched when the platform's view is unknown: a 5xx,
	// no answer, an answer cut short, undecodable or over MaxPageBytes.
	ErrUnavailable = errors.New("cloud controller unavailable")
	// ErrRateLimited is matched by a 429; the *APIError's Reset says until when.
	ErrRateLimited = errors.New("rate limited")
	// ErrUnauthorized is matched by a 401 or 403, and by UAA refusing the credentials.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrAnswerTooLarge is matched by an answer over its bound, or a list over MaxPages pages.
	ErrAnswerTooLarge = errors.New("answer too large")
	// ErrUnsafeLink is matched by a next link (or a UAA URL) the client refuses to follow.
	ErrUnsafeLink = errors.New("refusing to follow a link")
)

// CF error codes the client acts on.
const (
	CodeInvalidAuthToken = 1000
	CodeResourceNotFound = 10010
	// CodeBrokerNotRemovable is a broker's delete refused while instances
	// of its plans exist (CF-ServiceBrokerNotRemovable).
	CodeBrokerNotRemovable = 270010
)

// maxErrorText bounds, in bytes, each text quoted from an answer: 512.
const maxErrorText = httpkit.MaxErrorText

// APIError is an error answer of the Cloud Controller: its status and the
// first entry of its CF error object ({"errors":[{code,title,detail}]}).
type APIError struct {
	Endpoint string // route template, e.g. /v3/service_instances/:guid
	Method   string // the request's method; "" is GET
	Status   int
	Code     int    // 0 when the body was no CF error
	Title    string // e.g. CF-ResourceNotFound
	Detail   string // or the start of a body that was no CF error
	// Reset is when a rate limit ends (X-RateLimit-Reset or Retry-After); zero when not told.
	Reset time.Time
}

func (e *APIError) Error() string {
	var b strings.Builder
	method := e.Method
	if method == "" {
		method = http.MethodGet
	}
	fmt.Fprintf(&b, "cloud controller: %s %s: status %d", method, e.Endpoint, e.Status)
	if e.Title != "" || e.Code != 0 {
		fmt.Fprintf(&b, ", %s (%d)", e.Title, e.Code)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if !e.Reset.IsZero() {
		b.WriteString(", until " + e.Reset.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// Is lets errors.Is match the sentinels.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrUnavailable:
		return e.Status >= 500
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	}
	return false
}

// ParseAPIError builds an APIError from an error answer, JSON or not; it
// never fails and never panics, and its texts are bounded.
func ParseAPIError(endpoint string, status int, header http.Header, body []byte) *APIError {
	e := &APIError{Endpoint: endpoint, Status: status, Reset: resetTime(header, time.Now())}
	var d struct {
		Errors []struct {
			Code   int    `json:"code"`
			Title  string `json:"title"`
			Detail string `json:"detail"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &d) == nil && len(d.Errors) > 0 {
		first := d.Errors[0]
		e.Code, e.Title, e.Detail = first.Code, clean(first.Title), clean(first.Detail)
		return e
	}
	e.Detail = clean(strings.TrimSpace(string(body)))
	return e
}

// resetTime reads X-RateLimit-Reset (unix seconds), else Retry-After (seconds).
func resetTime(h http.Header, now time.Time) time.Time {
	if s, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil && s > 0 && s < 1<<40 {
		return time.Unix(s, 0)
	}
	if s, err := strconv.ParseInt(h.Get("Retry-After"), 10, 64); err == nil && s >= 0 && s < 1<<32 {
		return now.Add(time.Duration(s) * time.Second)
	}
	return time.Time{}
}

// clean makes s valid UTF-8 and cuts it to maxErrorText bytes at a rune
// boundary, "..." that marks the cut included (textcut.Marked).
func clean(s string) string {
	return textcut.Marked(strings.ToValidUTF8(s, "\uFFFD"), maxErrorText, "...")
}

// unavailable wraps a cause that leaves the platform's view unknown.
type unavailable struct{ err error }

func (e *unavailable) Error() string        { return e.err.Error() }
func (e *unavailable) Unwrap() error        { return e.err }
func (e *unavailable) Is(target error) bool { return target == ErrUnavailable }

// tooLarge is an answer over its bound; the view is unknown too.
type tooLarge struct{ *httpkit.TooLargeError }

// Is lets errors.Is match ErrAnswerTooLarge and ErrUnavailable.
func (e *tooLarge) Is(target error) bool {
	return target == ErrAnswerTooLarge || target == ErrUnavailable
}

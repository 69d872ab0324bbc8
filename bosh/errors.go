package bosh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpkit"
	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
)

// Director error codes that the client maps to sentinel errors.
const (
	// CodeDeploymentNotFound is the Director's code for an unknown deployment.
	CodeDeploymentNotFound = 70000
	// CodeTaskNotFound is the Director's code for an unknown task.
	CodeTaskNotFound = 10000
)

var (
	// ErrDeploymentNotFound is matched by an *APIError with code 70000.
	ErrDeploymentNotFound = errors.New("deployment not found")
	// ErrTaskNotFound is matched by an *APIError with code 10000.
	ErrTaskNotFound = errors.New("task not found")
	// ErrUnauthorized is matched by a 401 from the Director and by credentials
	// that UAA refuses: a wrong password or client secret, or a missing scope.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUntrustedUAA is matched when the Director's /info names a UAA token
	// URL that the client secret is not sent to (see untrustedTokenURL). Asking
	// again does not help until the Director's configuration changes.
	ErrUntrustedUAA = errors.New("refusing to send the client secret to UAA")
	// ErrAnswerTooLarge is matched by an answer of the Director or its UAA
	// over the size bound of its request (see answerLimit).
	ErrAnswerTooLarge = errors.New("answer too large")
)

// unreachable is an error of the transport: the Director (or its UAA) gave
// no answer (refused connection, reset, timeout). Its text is the cause's.
type unreachable struct{ err error }

func (e *unreachable) Error() string { return e.err.Error() }
func (e *unreachable) Unwrap() error { return e.err }

// Transient says whether err is a fault of the Director that asking again
// later may not meet: an answer 5xx or 429, or no answer at all (refused,
// reset, timed out). A request cancelled by its caller is not: nobody asks
// again. Answers about the request (4xx: not found, unauthorized, bad
// request) are not either.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var api *APIError
	if errors.As(err, &api) {
		return api.StatusCode >= 500 || api.StatusCode == http.StatusTooManyRequests
	}
	var u *unreachable
	return errors.As(err, &u)
}

// maxErrorText bounds, in bytes, the description kept in an APIError (the
// Director's own, or the start of a body that is not a Director error) and
// the other texts of an answer quoted in an error: an answer can be as long
// as its bound (see answerLimit), and errors end up in logs. 512, as
// decodeJSON cuts its errors.
const maxErrorText = httpkit.MaxErrorText

// APIError is an error answer from the Director (or from its UAA).
type APIError struct {
	// Director is the name of the client that got the answer.
	Director string
	// Method and Path are the request that failed.
	Method, Path string
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Code is the Director's error code, 0 when the body was not a Director error.
	Code int
	// Description is the Director's description, or the start of a plain-text
	// body (invalid UTF-8 replaced), at most maxErrorText bytes.
	Description string
}

// Error says which Director answered what to which request.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bosh director %q: %s %s: status %d", e.Director, e.Method, e.Path, e.StatusCode)
	if e.Code != 0 {
		fmt.Fprintf(&b, ", code %d", e.Code)
	}
	if e.Description != "" {
		b.WriteString(": " + e.Description)
	}
	return b.String()
}

// Is lets errors.Is match the sentinel errors of this package.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrDeploymentNotFound:
		return e.Code == CodeDeploymentNotFound
	case ErrTaskNotFound:
		return e.Code == CodeTaskNotFound
	case ErrUnauthorized:
		return e.StatusCode == 401
	}
	return false
}

// parseAPIError builds an APIError from an error answer, JSON or not.
func parseAPIError(director, method, path string, status int, body []byte) *APIError {
	e := &APIError{Director: director, Method: method, Path: path, StatusCode: status}
	var d struct {
		Code        int    `json:"code"`
		Description string `json:"description"`
	}
	if json.Unmarshal(body, &d) == nil && (d.Code != 0 || d.Description != "") {
		e.Code, e.Description = d.Code, shorten(d.Description)
		return e
	}
	e.Description = shorten(strings.ToValidUTF8(strings.TrimSpace(string(body)), "\uFFFD"))
	return e
}

// quote is s quoted as %q quotes it, cut by shorten: escapes can make a
// quoted text four times as long as the text.
func quote(s string) string { return shorten(strconv.Quote(s)) }

// shorten cuts s to at most maxErrorText bytes, "..." that marks the cut
// included, at a rune boundary (textcut.Marked); a text it returns is
// returned unchanged.
func shorten(s string) string { return textcut.Marked(s, maxErrorText, "...") }

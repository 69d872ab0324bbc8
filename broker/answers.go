package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
)

// shapeAnswers puts every answer of next in the shape the spec and the
// docs give it, where brokerapi and the parts in front of it (the guard,
// basic auth, the router) would not:
//
//   - an error (4xx and 5xx but 410, whose body is {} as the spec wants)
//     has one body: {"error": code, "description": sentence}; an answer
//     without a code gets its status's (BadRequest, NotFound...); a 422 or
//     5xx without one is not the broker's own (brokerapi's, when it could
//     not read a body or was handed an error that is no FailureResponse):
//     its description, which may be Go's error text, goes to the operator's
//     log and the platform user gets a sentence instead;
//   - a last_operation answer gets what brokerapi cannot give it
//     (pollHints): Retry-After while in progress, instance_usable and
//     update_repeatable when failed;
//   - a PUT or PATCH body is JSON whatever its Content-Type says, so that
//     brokerapi never reads it as a form (a bind with curl's
//     x-www-form-urlencoded was 422 "EOF": the form parser had eaten it).
func shapeAnswers(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut || r.Method == http.MethodPatch {
			r.Header.Set("Content-Type", "application/json")
		}
		hints := &pollHints{}
		r = r.WithContext(context.WithValue(r.Context(), pollHintsKey{}, hints))
		aw := &answerWriter{w: w, poll: isLastOperation(r), status: http.StatusOK}
		next.ServeHTTP(aw, r)
		aw.finish(log, r, hints)
	})
}

// isLastOperation says whether r asks an instance's or a binding's last_operation.
func isLastOperation(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v2/service_instances/") &&
		strings.HasSuffix(r.URL.Path, "/last_operation")
}

// answerWriter passes an answer through as it is written, but keeps an
// error's, and a last_operation's, to shape it (finish).
type answerWriter struct {
	w       http.ResponseWriter
	poll    bool
	status  int
	started bool // WriteHeader was called
	keep    bool // the answer is kept for finish
	body    bytes.Buffer
}

// Header is the answer's header.
func (a *answerWriter) Header() http.Header { return a.w.Header() }

// WriteHeader decides whether the answer is kept: an error's or a
// last_operation's is, any other goes out at once.
func (a *answerWriter) WriteHeader(code int) {
	if a.started {
		return
	}
	a.started, a.status = true, code
	a.keep = (code >= 400 && code != http.StatusGone) || (a.poll && code == http.StatusOK)
	if !a.keep {
		a.w.WriteHeader(code)
	}
}

// Write keeps or passes p on.
func (a *answerWriter) Write(p []byte) (int, error) {
	if !a.started {
		a.WriteHeader(http.StatusOK)
	}
	if a.keep {
		return a.body.Write(p)
	}
	return a.w.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (a *answerWriter) Unwrap() http.ResponseWriter { return a.w }

// finish sends a kept answer, shaped.
func (a *answerWriter) finish(log *slog.Logger, r *http.Request, hints *pollHints) {
	if !a.keep {
		return
	}
	var body []byte
	if a.status >= 400 {
		body = errorBody(log, r, a.status, a.body.Bytes())
	} else {
		body = hints.apply(a.w.Header(), a.body.Bytes())
	}
	a.w.Header().Set("Content-Type", "application/json")
	a.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	a.w.WriteHeader(a.status)
	_, _ = a.w.Write(body)
}

// osbError is the spec's error object, in the one shape the broker answers.
type osbError struct {
	Error       string `json:"error"`
	Description string `json:"description"`
}

// errorBody is the error object of an answer of status with body raw.
func errorBody(log *slog.Logger, r *http.Request, status int, raw []byte) []byte {
	var got struct {
		Error       string `json:"error"`
		Description string `json:"description"`
	}
	_ = json.Unmarshal(raw, &got) // a body that is not an error object is replaced below
	out := osbError{Error: got.Error, Description: strings.TrimSpace(got.Description)}
	if out.Error == "" {
		out.Error = statusCode(status)
		if status == http.StatusUnprocessableEntity || status >= 500 || out.Description == "" {
			if out.Description != "" {
				log.Warn("an answer's description was not the broker's own; the platform user got a sentence instead",
					"method", r.Method, "path", r.URL.Path, "status", status, "description", out.Description)
			}
			out.Description = statusSentence(status)
		}
	}
	return compact(out)
}

// compact is v as one line of JSON, as brokerapi writes its answers (HTML
// characters as they are). v is the broker's own: it cannot fail to encode.
func compact(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return buf.Bytes()
}

// statusCode is the error code of an answer of status without one of its
// own: the status's name in camel case.
func statusCode(status int) string {
	text := http.StatusText(status)
	if text == "" {
		return "Error"
	}
	return strings.Map(func(c rune) rune {
		if c == ' ' || c == '-' || c == '\'' {
			return -1
		}
		return c
	}, text)
}

// statusSentence is what the platform user is told of an error whose
// description was not the broker's own.
func statusSentence(status int) string {
	switch {
	case status == http.StatusUnprocessableEntity:
		return "the request could not be read: send a JSON object with the fields the Open Service Broker API defines"
	case status >= 500:
		return "the broker failed to answer; its log has the details"
	}
	return "the request was refused: " + strings.ToLower(http.StatusText(status))
}

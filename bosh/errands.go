package bosh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrandRun is how an errand is run (the body the bosh CLI's run-errand
// sends): KeepAlive keeps an errand instance group's VM after the run;
// WhenChanged skips the run when nothing changed since its last successful
// one; Instances limits a colocated errand to some instances (group, and
// an id or "first"; none: all).
type ErrandRun struct {
	KeepAlive   bool             `json:"keep-alive"`
	WhenChanged bool             `json:"when-changed"`
	Instances   []InstanceFilter `json:"instances"`
}

// InstanceFilter names instances of an errand run: a group, and an
// instance id (or "first"; "" = every instance of the group).
type InstanceFilter struct {
	Group string `json:"group"`
	ID    string `json:"id,omitempty"`
}

// ErrandResult is one instance's run of an errand, as the Director writes
// it in the task's result output (Errand::Result#to_hash).
type ErrandResult struct {
	Instance struct {
		Group string `json:"group"`
		ID    string `json:"id"`
	} `json:"instance"`
	ErrandName string `json:"errand_name"`
	// ExitCode is 0 for a run that succeeded, 1-128 for one that failed,
	// above 128 for one cancelled (the Director's classes).
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	Logs     struct {
		BlobstoreID string `json:"blobstore_id"`
		SHA1        string `json:"sha1"`
	} `json:"logs"`
}

// Succeeded says whether the run exited 0.
func (r ErrandResult) Succeeded() bool { return r.ExitCode == 0 }

// StderrTail is the end of the run's standard error (where errors usually
// are), at most n bytes, cut at a character's start, control characters
// but newlines and tabs made spaces, and "..." first when it was cut: for a
// description or a log line, never a terminal's control sequences.
func (r ErrandResult) StderrTail(n int) string {
	s := strings.TrimSpace(r.Stderr)
	cut := len(s) > n
	if cut {
		s = s[len(s)-n:]
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
	}
	s = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) && c != '\n' && c != '\t' {
			return ' '
		}
		return c
	}, s)
	if cut {
		return "..." + s
	}
	return s
}

// maxErrandResults bounds the result lines read of one errand task: one per
// instance it ran on.
const maxErrandResults = 10_000

// RunErrand asks the Director to run errand of deployment (POST
// /deployments/NAME/errands/ERRAND/runs, the body as JSON) and returns its
// task; the context id set with WithContextID goes with it. The errand is
// looked up by the task: an unknown one ends the task in error.
func (c *Client) RunErrand(ctx context.Context, deployment, errand string, run ErrandRun) (Task, error) {
	if deployment == "" || errand == "" {
		return Task{}, fmt.Errorf("running errand %q of deployment %q: %w", errand, deployment, errNoName)
	}
	if run.Instances == nil {
		run.Instances = []InstanceFilter{}
	}
	body, err := json.Marshal(run)
	if err != nil {
		return Task{}, fmt.Errorf("running errand %s of deployment %s: %w", errand, deployment, err)
	}
	t, err := c.conn.createTask(ctx, request{method: http.MethodPost, endpoint: epErrandRuns,
		path: deploymentPath(deployment) + "/errands/" + url.PathEscape(errand) + "/runs", body: body, contentType: "application/json"})
	if err != nil {
		return t, fmt.Errorf("running errand %s of deployment %s: %w", errand, deployment, err)
	}
	return t, nil
}

// ErrandResults reads the runs an errand task reports (its "result"
// output, a JSON line per instance); none for a run skipped (when-changed).
func (c *Client) ErrandResults(ctx context.Context, taskID int) ([]ErrandResult, error) {
	res, err := c.conn.do(ctx, request{method: http.MethodGet, path: taskPath(taskID) + "/output",
		query: url.Values{"type": {"result"}}, endpoint: epTaskOutput})
	if err != nil {
		return nil, fmt.Errorf("getting the errand results of task %d: %w", taskID, err)
	}
	out, err := ParseErrandResults(res.body)
	if err != nil {
		return nil, fmt.Errorf("getting the errand results of task %d: %w", taskID, err)
	}
	return out, nil
}

// errTooManyResults refuses a result output of more lines than a run has instances.
var errTooManyResults = errors.New("more errand results than a run can have")

// ParseErrandResults reads an errand task's result output: one JSON object
// per line, blank lines skipped; a line that is not a result is an error
// naming it, as is more than maxErrandResults lines. The body is already
// bounded by the client (answerLimit).
func ParseErrandResults(body []byte) ([]ErrandResult, error) {
	var out []ErrandResult
	n := 0
	for line := range bytes.Lines(body) {
		n++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if len(out) == maxErrandResults {
			return nil, fmt.Errorf("line %d: %w (%d)", n, errTooManyResults, maxErrandResults)
		}
		var r ErrandResult
		if err := decodeJSON(line, &r); err != nil {
			return nil, fmt.Errorf("decoding errand result line %d: %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

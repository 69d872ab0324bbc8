package cf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Job states, as the Cloud Controller's PollableJobModel names them.
const (
	JobProcessing = "PROCESSING"
	JobPolling    = "POLLING"
	JobComplete   = "COMPLETE"
	JobFailed     = "FAILED"
)

// ErrJobFailed is matched by a job that ended FAILED; the *JobError says why.
var ErrJobFailed = errors.New("the job failed")

// Job is an asynchronous operation of the Cloud Controller (GET /v3/jobs/:guid).
type Job struct {
	GUID, Operation, State string
	// Errors are the job's errors (a FAILED job's reasons), texts bounded.
	Errors []JobErrorEntry
}

// JobErrorEntry is one error of a job: the CF error object.
type JobErrorEntry struct {
	Code          int
	Title, Detail string
}

// JobError is a job that ended FAILED; it matches ErrJobFailed.
type JobError struct{ Job Job }

func (e *JobError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cloud controller: job %s (%s) failed", e.Job.GUID, e.Job.Operation)
	for i, x := range e.Job.Errors {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Job.Errors)-3)
			break
		}
		fmt.Fprintf(&b, "; %s (%d): %s", x.Title, x.Code, x.Detail)
	}
	return b.String()
}

// Is lets errors.Is match ErrJobFailed.
func (e *JobError) Is(target error) bool { return target == ErrJobFailed }

// maxJobErrors bounds the errors kept of a job.
const maxJobErrors = 16

// ParseJob decodes a job answer; one without a guid or a known state is
// refused. Texts are bounded; it never panics.
func ParseJob(body []byte) (Job, error) {
	var j struct {
		GUID      string `json:"guid"`
		Operation string `json:"operation"`
		State     string `json:"state"`
		Errors    []struct {
			Code   int    `json:"code"`
			Title  string `json:"title"`
			Detail string `json:"detail"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &j); err != nil {
		return Job{}, fmt.Errorf("undecodable job: %s", clean(err.Error()))
	}
	switch {
	case j.GUID == "":
		return Job{}, errors.New("the job has no guid")
	case j.State != JobProcessing && j.State != JobPolling && j.State != JobComplete && j.State != JobFailed:
		return Job{}, fmt.Errorf("job %s: unknown state %q", clean(j.GUID), clean(j.State))
	}
	out := Job{GUID: clean(j.GUID), Operation: clean(j.Operation), State: j.State}
	for i, e := range j.Errors {
		if i == maxJobErrors {
			break
		}
		out.Errors = append(out.Errors, JobErrorEntry{Code: e.Code, Title: clean(e.Title), Detail: clean(e.Detail)})
	}
	return out, nil
}

// jobPath is a job's path; a guid is letters, digits and dashes.
var jobPath = regexp.MustCompile(`^/v3/jobs/[A-Za-z0-9-]{1,64}$`)

// jobURL is the Location of an accepted request: a job on the API, or an error.
func (a *Admin) jobURL(method, endpoint, location string) (*url.URL, error) {
	u, err := url.Parse(location)
	if err != nil || !a.c.sameOrigin(u) || !jobPath.MatchString(u.Path) || u.RawQuery != "" {
		return nil, fmt.Errorf("cloud controller: %s %s: the job location %q is not a job on %s: %w", method, endpoint, clean(location), a.c.api, ErrUnsafeLink)
	}
	return u, nil
}

// waitJob polls the job at u every Options.JobPoll until it is COMPLETE
// (nil), FAILED (a *JobError) or ctx ends.
func (a *Admin) waitJob(ctx context.Context, u *url.URL) error {
	for {
		res, err := a.c.get(ctx, epJob, u)
		if err != nil {
			return err
		}
		j, err := ParseJob(res.body)
		if err != nil {
			return &unavailable{fmt.Errorf("cloud controller: GET %s: %w", epJob, err)}
		}
		switch j.State {
		case JobComplete:
			return nil
		case JobFailed:
			return &JobError{Job: j}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cloud controller: waiting for job %s (%s, %s): %w", j.GUID, j.Operation, j.State, ctx.Err())
		case <-time.After(a.c.opts.JobPoll):
		}
	}
}

// accepted follows a write's answer: a 202 with a job is waited on; any
// other 2xx is done.
func (a *Admin) accepted(ctx context.Context, method, endpoint string, res response) error {
	if res.status != 202 {
		return nil
	}
	u, err := a.jobURL(method, endpoint, res.header.Get("Location"))
	if err != nil {
		return err
	}
	return a.waitJob(ctx, u)
}

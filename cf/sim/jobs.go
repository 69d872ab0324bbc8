package sim

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Job states, as PollableJobModel names them.
const (
	jobProcessing = "PROCESSING"
	jobComplete   = "COMPLETE"
	jobFailed     = "FAILED"
	maxJobs       = 10_000 // the oldest are forgotten past this
)

// job is a pollable job: a broker's catalog synchronization, update or deletion.
type job struct {
	GUID                 string
	Operation, State     string
	CreatedAt, UpdatedAt time.Time
	link                 jobLink
	errs                 []cfError
}

// jobLink is the resource a job's links name while it exists: links[key] = url + path.
type jobLink struct {
	key, path string
	exists    func() bool
}

// brokerLink links a job to a broker (key service_brokers, or service_broker for a delete).
func brokerLink(f *Foundation, key, guid string) jobLink {
	return jobLink{key, "/v3/service_brokers/" + guid, func() bool { _, ok := getBroker(f, guid); return ok }}
}

// jobs runs the simulator's pollable jobs, each in a goroutine it waits for on stop.
type jobs struct {
	f   *Foundation
	url string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	byID  map[string]*job
	order []string
}

func newJobs(f *Foundation, url string) *jobs {
	ctx, cancel := context.WithCancel(context.Background())
	return &jobs{f: f, url: url, ctx: ctx, cancel: cancel, byID: map[string]*job{}}
}

// start records a PROCESSING job and runs it; run's error fails it.
func (j *jobs) start(operation string, link jobLink, run func(context.Context) *cfError) string {
	jb := &job{GUID: newUUID(), Operation: operation, State: jobProcessing, CreatedAt: now(), UpdatedAt: now(), link: link}
	j.mu.Lock()
	j.byID[jb.GUID] = jb
	j.order = append(j.order, jb.GUID)
	if len(j.order) > maxJobs {
		delete(j.byID, j.order[0])
		j.order = j.order[1:]
	}
	j.mu.Unlock()
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		err := run(j.ctx)
		j.mu.Lock()
		defer j.mu.Unlock()
		jb.State, jb.UpdatedAt = jobComplete, now()
		if err != nil {
			jb.State, jb.errs = jobFailed, []cfError{*err}
		}
	}()
	return jb.GUID
}

// background runs work that no pollable job shows (CC's orphan
// mitigation), until it ends or stop cancels it.
func (j *jobs) background(run func(context.Context)) {
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		run(j.ctx)
	}()
}

// stop cancels the jobs running and waits for them.
func (j *jobs) stop() {
	j.cancel()
	j.wg.Wait()
}

type jobJSON struct {
	GUID      string          `json:"guid"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Operation string          `json:"operation"`
	State     string          `json:"state"`
	Errors    []cfError       `json:"errors"`
	Warnings  []any           `json:"warnings"`
	Links     map[string]href `json:"links"`
}

// get is GET /v3/jobs/:guid, as JobPresenter writes a job.
func (j *jobs) get(w http.ResponseWriter, r *http.Request) {
	j.mu.Lock()
	jb, ok := j.byID[r.PathValue("guid")]
	var out jobJSON
	if ok {
		out = jobJSON{GUID: jb.GUID, CreatedAt: jb.CreatedAt, UpdatedAt: jb.UpdatedAt, Operation: jb.Operation, State: jb.State,
			Errors: append([]cfError{}, jb.errs...), Warnings: []any{}, Links: map[string]href{"self": {j.url + "/v3/jobs/" + jb.GUID}}}
	}
	j.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Job"))
		return
	}
	if jb.link.exists() {
		out.Links[jb.link.key] = href{j.url + jb.link.path}
	}
	writeJSON(w, http.StatusOK, out)
}

package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// adminConfig is the body of GET and POST /_sim/config; on POST, absent
// fields are left as they are and "failures" replaces every failure.
type adminConfig struct {
	LatencyMS      *int64          `json:"latency_ms,omitempty"`
	TaskDurationMS *int64          `json:"task_duration_ms,omitempty"`
	TokenTTLS      *int64          `json:"token_ttl_s,omitempty"`
	EventsKept     *int            `json:"events_kept,omitempty"`
	RecordEvents   *bool           `json:"record_events,omitempty"`
	Failures       *[]adminFailure `json:"failures,omitempty"`
}

// adminFailure is a Failure in JSON, its delay in milliseconds.
type adminFailure = simkit.AdminFailure

// adminSeed is the body of POST /_sim/seed.
type adminSeed struct {
	Count int        `json:"count"`
	Plans []SeedPlan `json:"plans"`
}

type adminNextTask struct {
	Deployment string `json:"deployment"`
	State      string `json:"state"`
}

// adminRoutes serves the /_sim admin API: no authentication, no latency,
// no failures, not counted.
func (d *Director) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /_sim/stats", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, d.Stats()) })
	mux.HandleFunc("GET /_sim/tasks", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, d.TaskLog()) })
	mux.HandleFunc("POST /_sim/reset", d.adminReset)
	mux.HandleFunc("GET /_sim/config", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, d.adminConfig()) })
	mux.HandleFunc("POST /_sim/config", d.adminSetConfig)
	mux.HandleFunc("POST /_sim/seed", d.adminSeed)
	mux.HandleFunc("POST /_sim/next-task", d.adminNextTask)
	mux.HandleFunc("POST /_sim/tasks-cleanup", func(w http.ResponseWriter, r *http.Request) { // the Director's weekly cleanup, now
		var body struct {
			MaxTasks *int `json:"max_tasks"`
		}
		if !decodeAdmin(w, r, &body) {
			return
		}
		keep := DefaultMaxTasks
		if body.MaxTasks != nil {
			keep = *body.MaxTasks
		}
		if keep < 0 {
			adminError(w, http.StatusBadRequest, fmt.Errorf("max_tasks %d is negative", keep))
			return
		}
		d.mu.Lock()
		removed := cleanupTasks(d.tasks, keep)
		d.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]int{"removed": removed})
	})
	mux.HandleFunc("POST /_sim/revoke-tokens", func(w http.ResponseWriter, _ *http.Request) {
		d.RevokeTokens()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("PUT /_sim/cloud-config", d.adminCloudConfig)
	mux.HandleFunc("POST /_sim/agent", d.adminAgent)
	mux.HandleFunc("POST /_sim/resurrect", d.adminResurrect)
	mux.HandleFunc("PUT /_sim/deployments", d.adminPutDeployment)
	mux.HandleFunc("DELETE /_sim/deployments", func(w http.ResponseWriter, _ *http.Request) {
		d.RemoveAllDeployments()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE /_sim/deployments/{name}", func(w http.ResponseWriter, r *http.Request) {
		d.RemoveDeployment(r.PathValue("name"))
		w.WriteHeader(http.StatusNoContent)
	})
}

func adminError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

// decodeAdmin reads a JSON body strictly; on failure it has answered 400.
func decodeAdmin(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		adminError(w, http.StatusBadRequest, err)
		return false
	}
	return true
}

// adminReset zeroes the counters and removes failures and pending task ends.
func (d *Director) adminReset(w http.ResponseWriter, _ *http.Request) {
	d.ResetStats()
	d.ClearFailures()
	d.mu.Lock()
	clear(d.outcomes)
	d.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (d *Director) adminConfig() adminConfig {
	lat, dur := d.knobs.latency().Milliseconds(), d.knobs.taskDuration().Milliseconds()
	ttl := int64(d.knobs.tokenTTL().Seconds())
	fs := simkit.AdminFailures(d.Failures())
	kept, record := d.EventsKept(), !d.knobs.noEvents.Load()
	return adminConfig{LatencyMS: &lat, TaskDurationMS: &dur, TokenTTLS: &ttl, EventsKept: &kept, RecordEvents: &record, Failures: &fs}
}

func (d *Director) adminSetConfig(w http.ResponseWriter, r *http.Request) {
	var c adminConfig
	if !decodeAdmin(w, r, &c) {
		return
	}
	failures, err := c.check()
	if err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	if c.LatencyMS != nil {
		d.SetLatency(time.Duration(*c.LatencyMS) * time.Millisecond)
	}
	if c.TaskDurationMS != nil {
		d.SetTaskDuration(time.Duration(*c.TaskDurationMS) * time.Millisecond)
	}
	if c.TokenTTLS != nil {
		d.SetTokenTTL(time.Duration(*c.TokenTTLS) * time.Second)
	}
	if c.EventsKept != nil {
		d.SetEventsKept(*c.EventsKept)
	}
	if c.RecordEvents != nil {
		d.knobs.noEvents.Store(!*c.RecordEvents)
	}
	if c.Failures != nil {
		d.knobs.setFailures(failures)
	}
	writeJSON(w, http.StatusOK, d.adminConfig())
}

// check refuses negative durations, a token lifetime below one second, no
// events kept and
// failures InjectFailure would refuse, so that a refused body changes
// nothing; it returns the failures.
func (c adminConfig) check() ([]Failure, error) {
	switch {
	case c.LatencyMS != nil && *c.LatencyMS < 0:
		return nil, fmt.Errorf("latency_ms %d is negative", *c.LatencyMS)
	case c.TaskDurationMS != nil && *c.TaskDurationMS < 0:
		return nil, fmt.Errorf("task_duration_ms %d is negative", *c.TaskDurationMS)
	case c.TokenTTLS != nil && *c.TokenTTLS < 1:
		return nil, fmt.Errorf("token_ttl_s %d is less than 1", *c.TokenTTLS)
	case c.EventsKept != nil && *c.EventsKept < 1:
		return nil, fmt.Errorf("events_kept %d is less than 1", *c.EventsKept)
	case c.Failures == nil:
		return nil, nil
	}
	return simkit.FromAdmin(*c.Failures, checkFailure)
}

func (d *Director) adminSeed(w http.ResponseWriter, r *http.Request) {
	var s adminSeed
	if !decodeAdmin(w, r, &s) {
		return
	}
	plans, err := s.check()
	if err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	names := d.SeedDeployments(s.Count, plans)
	if names == nil {
		names = []string{}
	}
	writeJSON(w, http.StatusOK, map[string][]string{"names": names})
}

// check refuses a count outside 1..MaxSeed and plans New would refuse; it
// returns the plans (nil: Options.SeedPlans).
func (s adminSeed) check() ([]SeedPlan, error) {
	if s.Count < 1 || s.Count > MaxSeed {
		return nil, fmt.Errorf("count %d is not between 1 and %d", s.Count, MaxSeed)
	}
	for _, p := range s.Plans {
		if err := p.validate(); err != nil {
			return nil, err
		}
	}
	return s.Plans, nil
}

func (d *Director) adminNextTask(w http.ResponseWriter, r *http.Request) {
	var n adminNextTask
	if !decodeAdmin(w, r, &n) {
		return
	}
	if err := d.EndNextTask(n.Deployment, or(n.State, StateError)); err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (d *Director) adminCloudConfig(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxManifest))
	if err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	d.SetCloudConfig(string(body))
	w.WriteHeader(http.StatusNoContent)
}

func (d *Director) adminPutDeployment(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxManifest))
	if err == nil {
		err = d.PutDeployment(string(body))
	}
	if err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// adminInstance is the body of POST /_sim/agent and /_sim/resurrect.
type adminInstance struct {
	Deployment string `json:"deployment"`
	Instance   string `json:"instance"`
	Agent      string `json:"agent"`
}

// adminAgent is POST /_sim/agent: as SetAgent.
func (d *Director) adminAgent(w http.ResponseWriter, r *http.Request) {
	var a adminInstance
	if !decodeAdmin(w, r, &a) {
		return
	}
	if err := d.SetAgent(a.Deployment, a.Instance, or(a.Agent, AgentRunning)); err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// adminResurrect is POST /_sim/resurrect: as Resurrect, answered once done.
func (d *Director) adminResurrect(w http.ResponseWriter, r *http.Request) {
	var a adminInstance
	if !decodeAdmin(w, r, &a) {
		return
	}
	if err := d.Resurrect(a.Deployment, a.Instance); err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

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

// admin is the admin HTTP API under /_sim/: the knobs, the counters, the
// seeds and the changes made behind the broker's back, over HTTP.
type admin struct {
	db      *store
	knobs   *Knobs
	faults  *Faults
	meter   *meter
	gate    *gate // whose tokens it revokes
	configs *configBook
	deploys *deploys
	board   *taskBoard
	health  *health
	errands *errands
}

// routes serves the /_sim admin API: no authentication, no latency,
// no failures, not counted.
func (adm *admin) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /_sim/stats", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, adm.meter.stats()) })
	mux.HandleFunc("GET /_sim/tasks", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, adm.meter.taskLog()) })
	mux.HandleFunc("POST /_sim/reset", adm.reset)
	mux.HandleFunc("GET /_sim/config", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, adm.config()) })
	mux.HandleFunc("POST /_sim/config", adm.setConfig)
	mux.HandleFunc("POST /_sim/seed", adm.seed)
	mux.HandleFunc("POST /_sim/next-task", adm.nextTask)
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
		adm.db.mu.Lock()
		removed := cleanupTasks(adm.db.tasks, keep)
		adm.db.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]int{"removed": removed})
	})
	mux.HandleFunc("POST /_sim/revoke-tokens", func(w http.ResponseWriter, _ *http.Request) {
		adm.gate.tokens.rotate()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("PUT /_sim/cloud-config", adm.cloudConfig)
	mux.HandleFunc("POST /_sim/agent", adm.agent)
	mux.HandleFunc("POST /_sim/resurrect", adm.resurrect)
	mux.HandleFunc("PUT /_sim/deployments", adm.putDeployment)
	adm.errands.adminRoutes(mux)
	mux.HandleFunc("DELETE /_sim/deployments", func(w http.ResponseWriter, _ *http.Request) {
		adm.deploys.removeAll()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE /_sim/deployments/{name}", func(w http.ResponseWriter, r *http.Request) {
		adm.deploys.remove(r.PathValue("name"))
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

// reset is POST /_sim/reset: it zeroes the counters, removes failures and
// pending task ends, and brings back the errand outcomes of Options.Errands.
func (adm *admin) reset(w http.ResponseWriter, _ *http.Request) {
	adm.meter.reset()
	adm.faults.Clear()
	adm.db.mu.Lock()
	clear(adm.db.outcomes)
	adm.db.mu.Unlock()
	adm.errands.reset()
	w.WriteHeader(http.StatusNoContent)
}

// config is the body of GET /_sim/config: the knobs and failures in effect.
func (adm *admin) config() adminConfig {
	lat, dur := adm.knobs.latency().Milliseconds(), adm.knobs.taskDuration().Milliseconds()
	ttl := int64(adm.knobs.tokenTTL().Seconds())
	fs := simkit.AdminFailures(adm.faults.List())
	kept, record := adm.knobs.EventsKept(), !adm.knobs.noEvents.Load()
	return adminConfig{LatencyMS: &lat, TaskDurationMS: &dur, TokenTTLS: &ttl, EventsKept: &kept, RecordEvents: &record, Failures: &fs}
}

// setConfig is POST /_sim/config: a refused body changes nothing.
func (adm *admin) setConfig(w http.ResponseWriter, r *http.Request) {
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
		adm.knobs.SetLatency(time.Duration(*c.LatencyMS) * time.Millisecond)
	}
	if c.TaskDurationMS != nil {
		adm.knobs.SetTaskDuration(time.Duration(*c.TaskDurationMS) * time.Millisecond)
	}
	if c.TokenTTLS != nil {
		adm.knobs.SetTokenTTL(time.Duration(*c.TokenTTLS) * time.Second)
	}
	if c.EventsKept != nil {
		adm.knobs.SetEventsKept(*c.EventsKept)
	}
	if c.RecordEvents != nil {
		adm.knobs.noEvents.Store(!*c.RecordEvents)
	}
	if c.Failures != nil {
		adm.faults.set.Set(failures)
	}
	writeJSON(w, http.StatusOK, adm.config())
}

// check refuses negative durations, a token lifetime below one second, no
// events kept and failures Faults.Inject would refuse, so that a refused
// body changes nothing; it returns the failures.
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

// seed is POST /_sim/seed: as SeedDeployments.
func (adm *admin) seed(w http.ResponseWriter, r *http.Request) {
	var s adminSeed
	if !decodeAdmin(w, r, &s) {
		return
	}
	plans, err := s.check()
	if err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	names := adm.deploys.seed(s.Count, plans)
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

// nextTask is POST /_sim/next-task: as EndNextTask.
func (adm *admin) nextTask(w http.ResponseWriter, r *http.Request) {
	var n adminNextTask
	if !decodeAdmin(w, r, &n) {
		return
	}
	if err := adm.board.endNext(n.Deployment, or(n.State, StateError)); err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// cloudConfig is PUT /_sim/cloud-config: as SetCloudConfig.
func (adm *admin) cloudConfig(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxManifest))
	if err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	adm.configs.setCloud(string(body))
	w.WriteHeader(http.StatusNoContent)
}

// putDeployment is PUT /_sim/deployments: as PutDeployment.
func (adm *admin) putDeployment(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxManifest))
	if err == nil {
		err = adm.deploys.put(string(body))
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

// agent is POST /_sim/agent: as SetAgent.
func (adm *admin) agent(w http.ResponseWriter, r *http.Request) {
	var a adminInstance
	if !decodeAdmin(w, r, &a) {
		return
	}
	if err := adm.health.setAgent(a.Deployment, a.Instance, or(a.Agent, AgentRunning)); err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// resurrect is POST /_sim/resurrect: as Resurrect, answered once done.
func (adm *admin) resurrect(w http.ResponseWriter, r *http.Request) {
	var a adminInstance
	if !decodeAdmin(w, r, &a) {
		return
	}
	if err := adm.health.resurrect(a.Deployment, a.Instance); err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

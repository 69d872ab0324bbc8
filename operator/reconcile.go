package operator

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpjson"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
)

// Reconciler runs reconciler passes and fleet upgrades on demand and
// reports their status (reconciler.Manager).
type Reconciler interface {
	Trigger(opts report.RunOptions) (runID string, done <-chan report.Summary, err error)
	Status() reconciler.Status
}

// ReconcileHandler serves /b/reconcile with rec's runs and status; rec nil
// answers 503. log (nil: slog.Default()) gets a line for each forced run.
// It checks no credentials: the daemon mounts it behind the operator's.
func ReconcileHandler(rec Reconciler, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return reconcileHandler{rec: rec, log: log}
}

// Bounds of POST /b/reconcile?wait=.
const (
	// maxWait caps ?wait= so that a request cannot hold a connection forever.
	maxWait = 10 * time.Minute
	// dryRunWait is how long a dry run without ?wait= is waited for.
	dryRunWait = time.Minute
	// answerSlack is the time left to write the answer once a wait ends.
	answerSlack = 30 * time.Second
)

// reconcileHandler serves /b/reconcile:
//
//	POST /b/reconcile                forces a run; 202 {"run_id"}
//	POST /b/reconcile?wait=60s       waits for it; 200 {"run_id", "summary"}, or 504
//	POST /b/reconcile?dry_run=true   the plan of a dry run (waits 1m unless ?wait= says otherwise)
//	POST /b/reconcile?service=ID&plan=ID&deployment=NAME&instance=ID
//	                                 a run over that scope only (any combination); an instance in
//	                                 scope is tried even when it is quarantined
//	POST /b/reconcile?retry_quarantined=true  tries every quarantined item
//	POST /b/reconcile?refresh=false  a run with the cache and the event feed (default: cache cleared, all fetched)
//	GET  /b/reconcile                the reconciler's status
type reconcileHandler struct {
	rec Reconciler
	log *slog.Logger
}

// runAnswer is the body of POST /b/reconcile.
type runAnswer struct {
	RunID   string          `json:"run_id"`
	DryRun  bool            `json:"dry_run"`
	Status  string          `json:"status"`
	Summary *report.Summary `json:"summary,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// ServeHTTP serves GET (status) and POST (force a run) on /b/reconcile.
func (h reconcileHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.rec == nil {
		httpjson.Write(w, http.StatusServiceUnavailable, httpjson.Error{Description: "the reconciler is not available"})
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		httpjson.Write(w, http.StatusOK, h.rec.Status())
	case http.MethodPost:
		h.trigger(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		httpjson.Write(w, http.StatusMethodNotAllowed, httpjson.Error{Description: "use GET or POST"})
	}
}

// trigger forces a run and, when asked, waits for it.
func (h reconcileHandler) trigger(w http.ResponseWriter, r *http.Request) {
	wait, dryRun, err := runQuery(r)
	if err != nil {
		httpjson.Write(w, http.StatusBadRequest, httpjson.Error{Error: "BadRequest", Description: err.Error()})
		return
	}
	opts, err := runOptionsQuery(r)
	if err != nil {
		httpjson.Write(w, http.StatusBadRequest, httpjson.Error{Error: "BadRequest", Description: err.Error()})
		return
	}
	opts.DryRun, opts.Reason = dryRun, "POST /b/reconcile"
	if !opts.Scope.Empty() {
		opts.Reason += "?" + opts.Scope.String()
	}
	id, done, err := h.rec.Trigger(opts)
	if err != nil {
		status := http.StatusServiceUnavailable
		if errors.Is(err, reconciler.ErrDisabled) || errors.Is(err, reconciler.ErrNotLeader) {
			status = http.StatusConflict // ErrNotLeader names the daemon that runs the reconciler
		}
		httpjson.Write(w, status, httpjson.Error{Description: "cannot start a run: " + err.Error()})
		return
	}
	h.log.Info("reconciler run forced", "run", id, "dry_run", dryRun, "wait", wait)
	if wait == 0 {
		httpjson.Write(w, http.StatusAccepted, runAnswer{RunID: id, DryRun: dryRun, Status: "queued"})
		return
	}
	h.await(w, r, id, dryRun, done, wait)
}

// await answers with the run's summary, or 504 when wait ends first.
func (h reconcileHandler) await(w http.ResponseWriter, r *http.Request, id string, dryRun bool, done <-chan report.Summary, wait time.Duration) {
	// The server's write timeout is sized for OSB answers; this one may wait longer.
	if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + answerSlack)); err != nil {
		h.log.Debug("cannot extend the write deadline", "error", err)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case s, ok := <-done:
		if !ok {
			httpjson.Write(w, http.StatusServiceUnavailable, runAnswer{RunID: id, DryRun: dryRun, Status: "stopped",
				Error: "the reconciler stopped before run " + id + " ended"})
			return
		}
		httpjson.Write(w, http.StatusOK, runAnswer{RunID: id, DryRun: dryRun, Status: "done", Summary: &s})
	case <-timer.C:
		httpjson.Write(w, http.StatusGatewayTimeout, runAnswer{RunID: id, DryRun: dryRun, Status: "running",
			Error: fmt.Sprintf("run %s had not ended after %s; it goes on: GET /b/reconcile shows its progress", id, wait)})
	case <-r.Context().Done():
	}
}

// runQuery reads ?wait=DURATION and ?dry_run=BOOL.
func runQuery(r *http.Request) (wait time.Duration, dryRun bool, err error) {
	q := r.URL.Query()
	if v := q.Get("dry_run"); v != "" {
		if dryRun, err = strconv.ParseBool(v); err != nil {
			return 0, false, fmt.Errorf("dry_run=%q: want true or false", v)
		}
	}
	if v := q.Get("wait"); v != "" {
		if wait, err = time.ParseDuration(v); err != nil || wait < 0 {
			return 0, false, fmt.Errorf("wait=%q: want a duration such as 60s", v)
		}
		if wait > maxWait {
			return 0, false, fmt.Errorf("wait=%q: at most %s", v, maxWait)
		}
	} else if dryRun {
		wait = dryRunWait
	}
	return wait, dryRun, nil
}

// runOptionsQuery reads the scope (?service=, ?plan=, ?deployment=,
// ?instance=, each at most once), ?retry_quarantined=BOOL and ?refresh=BOOL
// (default true: a forced run).
func runOptionsQuery(r *http.Request) (report.RunOptions, error) {
	opts := report.RunOptions{Force: true}
	q := r.URL.Query()
	if v := q.Get("refresh"); v != "" {
		refresh, err := strconv.ParseBool(v)
		if err != nil {
			return opts, fmt.Errorf("refresh=%q: want true or false", v)
		}
		opts.Force = refresh
	}
	for _, f := range []struct {
		name string
		to   *string
	}{{"service", &opts.Scope.Service}, {"plan", &opts.Scope.Plan}, {"deployment", &opts.Scope.Deployment}, {"instance", &opts.Scope.Instance}} {
		values := q[f.name]
		if len(values) > 1 {
			return opts, fmt.Errorf("%s= given %d times: at most once", f.name, len(values))
		}
		if len(values) == 1 {
			if err := checkID(f.name, values[0], false); err != nil {
				return opts, err
			}
			*f.to = values[0]
		}
	}
	if v := q.Get("retry_quarantined"); v != "" {
		var err error
		if opts.RetryQuarantined, err = strconv.ParseBool(v); err != nil {
			return opts, fmt.Errorf("retry_quarantined=%q: want true or false", v)
		}
	}
	return opts, nil
}

package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpjson"
	"github.com/blacksmith-reconciler/blacksmith/internal/ids"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// InstanceReader shows what the reconciler knows of an instance
// (reconciler.Views).
type InstanceReader interface {
	Instance(ctx context.Context, id string) (*reconciler.InstanceView, error)
}

// Instances show the reconciler's run log, roll an instance back and
// confirm an adoption (reconciler.Manager).
type Instances interface {
	Runs(ctx context.Context, limit int) ([]report.Summary, error)
	Rollback(ctx context.Context, id, backupID string, redeploy bool) (reconciler.RollbackResult, error)
	Adopt(ctx context.Context, id, by string) (*vault.Record, error)
}

// Bounds of the instance endpoints.
const (
	// maxIDLength bounds an instance or backup id in a path or query: the
	// longest id the broker may be configured to take.
	maxIDLength = ids.MaxLength
	// defaultRuns and maxRuns bound GET /b/runs?limit=.
	defaultRuns, maxRuns = 20, 1000
	// rollbackTimeout bounds a rollback once it has started: it goes on
	// when the client hangs up, so that it is never left half-done.
	rollbackTimeout = 30 * time.Minute
)

// InstancesHandler serves, behind the daemon's credentials:
//
//	GET  /b/instances/{id}                              the record, match, quarantine, backups, history
//	POST /b/instances/{id}/restore?backup=ID&redeploy=true   a rollback (redeploy: the backup's manifest first)
//	POST /b/instances/{id}/adopt                        confirms an instance the reconciler adopted
//	GET  /b/runs?limit=N                                the newest runs of the run log
//
// inst nil answers 503.
func InstancesHandler(views InstanceReader, inst Instances, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	h := instancesHandler{views: views, inst: inst, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /b/instances/{id}", h.show)
	mux.HandleFunc("POST /b/instances/{id}/restore", h.restore)
	mux.HandleFunc("POST /b/instances/{id}/adopt", h.adopt)
	mux.HandleFunc("GET /b/runs", h.runs)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Write(w, http.StatusNotFound, httpjson.Error{Description: "no such operator endpoint (or method): " + r.Method + " " + r.URL.Path})
	})
	return h.available(mux)
}

type instancesHandler struct {
	views InstanceReader
	inst  Instances
	log   *slog.Logger
}

func (h instancesHandler) available(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.inst == nil {
			httpjson.Write(w, http.StatusServiceUnavailable, httpjson.Error{Description: "the reconciler is not available"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// show answers GET /b/instances/{id}.
func (h instancesHandler) show(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	v, err := h.views.Instance(r.Context(), id)
	switch {
	case err != nil:
		h.fail(w, "reading instance "+id, err)
	case v == nil:
		httpjson.Write(w, http.StatusNotFound, httpjson.Error{Error: "NotFound", Description: "no record and no history for instance " + id})
	default:
		httpjson.Write(w, http.StatusOK, v)
	}
}

// restore answers POST /b/instances/{id}/restore.
func (h instancesHandler) restore(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	backup := q.Get("backup")
	if err := checkID("backup", backup, true); err != nil {
		httpjson.Write(w, http.StatusBadRequest, httpjson.Error{Error: "BadRequest", Description: err.Error()})
		return
	}
	redeploy := false
	if v := q.Get("redeploy"); v != "" {
		var err error
		if redeploy, err = strconv.ParseBool(v); err != nil {
			httpjson.Write(w, http.StatusBadRequest, httpjson.Error{Error: "BadRequest", Description: fmt.Sprintf("redeploy=%q: want true or false", v)})
			return
		}
	}
	if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(rollbackTimeout + answerSlack)); err != nil {
		h.log.Debug("cannot extend the write deadline", "error", err)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), rollbackTimeout)
	defer cancel()
	h.log.Info("instance rollback asked for", "instance", id, "backup", backup, "redeploy", redeploy)
	res, err := h.inst.Rollback(ctx, id, backup, redeploy)
	if err != nil {
		h.fail(w, "rolling back instance "+id, err)
		return
	}
	httpjson.Write(w, http.StatusOK, res)
}

// adopt answers POST /b/instances/{id}/adopt: the record the reconciler made
// of a deployment it found becomes the broker's own.
func (h instancesHandler) adopt(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	h.log.Info("adoption confirmation asked for", "instance", id)
	rec, err := h.inst.Adopt(r.Context(), id, "operator (POST /b/instances/{id}/adopt)")
	if err != nil {
		h.fail(w, "confirming the adoption of instance "+id, err)
		return
	}
	httpjson.Write(w, http.StatusOK, struct {
		InstanceID string        `json:"instance_id"`
		Record     *vault.Record `json:"record"`
	}{id, rec})
}

// runs answers GET /b/runs.
func (h instancesHandler) runs(w http.ResponseWriter, r *http.Request) {
	limit := defaultRuns
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxRuns {
			httpjson.Write(w, http.StatusBadRequest, httpjson.Error{Error: "BadRequest", Description: fmt.Sprintf("limit=%q: want 1 to %d", v, maxRuns)})
			return
		}
		limit = n
	}
	runs, err := h.inst.Runs(r.Context(), limit)
	if err != nil && len(runs) == 0 {
		h.fail(w, "reading the run log", err)
		return
	}
	problems := []string{}
	if err != nil {
		problems = append(problems, err.Error())
	}
	httpjson.Write(w, http.StatusOK, struct {
		Runs     []report.Summary `json:"runs"`
		Problems []string         `json:"problems"`
	}{runs, problems})
}

// fail answers an error: what the operator asked for was wrong (4xx), or
// Vault or the Director failed (502/503).
func (h instancesHandler) fail(w http.ResponseWriter, what string, err error) {
	status := http.StatusBadGateway
	switch {
	case errors.Is(err, vault.ErrInvalid):
		status = http.StatusBadRequest
	case errors.Is(err, vault.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, reconciler.ErrBusy), errors.Is(err, reconciler.ErrNotLeader), errors.Is(err, reconciler.ErrNotAdopted):
		status = http.StatusConflict // ErrNotLeader names the daemon that runs the reconciler
	case errors.Is(err, reconciler.ErrRollback):
		status = http.StatusUnprocessableEntity
	case errors.Is(err, reconciler.ErrNoDeployer):
		status = http.StatusNotImplemented
	}
	h.log.Warn("operator request failed", "what", what, "status", status, "error", err)
	httpjson.Write(w, status, httpjson.Error{Description: what + ": " + err.Error()})
}

// pathID reads and checks {id}; false when it answered 400.
func pathID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if err := checkID("instance id", id, false); err != nil {
		httpjson.Write(w, http.StatusBadRequest, httpjson.Error{Error: "BadRequest", Description: err.Error()})
		return "", false
	}
	return id, true
}

// checkID bounds an id taken from a request: printable ASCII without
// slashes or spaces, at most maxIDLength bytes.
func checkID(what, id string, optional bool) error {
	if id == "" {
		if optional {
			return nil
		}
		return fmt.Errorf("%s is required", what)
	}
	if len(id) > maxIDLength {
		return fmt.Errorf("%s is longer than %d characters", what, maxIDLength)
	}
	if strings.IndexFunc(id, func(c rune) bool { return c <= ' ' || c > '~' || c == '/' }) >= 0 {
		return fmt.Errorf("%s %q has a character other than printable ASCII (no space or slash)", what, id)
	}
	return nil
}

package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpjson"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
)

// Bounds of GET /b/upgrades?instances=.
const (
	// defaultListed is how many instances of the current fleet upgrade are
	// listed unless ?instances= says otherwise.
	defaultListed = 1000
	// maxListed caps ?instances=.
	maxListed = 10000
)

// FleetUpgrades starts fleet upgrades and says how they stand;
// *reconciler.Upgrades has it.
type FleetUpgrades interface {
	Start(req reconciler.UpgradeRequest) (report.UpgradeReport, error)
	Status(ctx context.Context) (reconciler.UpgradeStatus, error)
}

// UpgradesHandler serves /b/upgrades with up's fleet upgrades; up nil
// answers 503. log (nil: slog.Default()) gets a line for each fleet upgrade
// started. It checks no credentials and no origin: the daemon mounts it
// behind the operator's credentials and the cross-origin protection of the
// other /b/ routes.
func UpgradesHandler(up FleetUpgrades, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return upgradesHandler{up: up, log: log}
}

// upgradesHandler serves /b/upgrades:
//
//	POST /b/upgrades                 starts a fleet upgrade of every outdated instance; 202 with its report
//	POST /b/upgrades?dry_run=true    what it would do, changing nothing
//	POST /b/upgrades?service=ID&plan=ID&director=NAME&instance=ID&instance=ID
//	                                 over that scope only; the rules canaries, max_in_flight,
//	                                 max_failures and attempt_limit override the configured ones
//	GET  /b/upgrades?instances=N     the mode, the current or last fleet upgrade (its first N
//	                                 instances), the upgrades in flight and the upgrade quarantine
type upgradesHandler struct {
	up  FleetUpgrades
	log *slog.Logger
}

// upgradesAnswer is the body of GET /b/upgrades.
type upgradesAnswer struct {
	reconciler.UpgradeStatus
	// InstancesLeftOff counts the instances of current.instances not
	// listed (?instances=); current.counts counts them all.
	InstancesLeftOff int `json:"instances_left_off"`
	// Problems say what could not be read; in_flight and quarantined are
	// null when the journal could not be read.
	Problems []string `json:"problems"`
}

// ServeHTTP serves GET (the fleet upgrades) and POST (start one) on /b/upgrades.
func (h upgradesHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.up == nil {
		httpjson.Write(w, http.StatusServiceUnavailable, httpjson.Error{Description: "the reconciler is not available"})
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.show(w, r)
	case http.MethodPost:
		h.start(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		httpjson.Write(w, http.StatusMethodNotAllowed, httpjson.Error{Description: "use GET or POST"})
	}
}

// start starts a fleet upgrade and answers with its report as it starts.
func (h upgradesHandler) start(w http.ResponseWriter, r *http.Request) {
	req, err := upgradeQuery(r.URL.Query())
	if err != nil {
		httpjson.Write(w, http.StatusBadRequest, httpjson.Error{Error: "BadRequest", Description: err.Error()})
		return
	}
	rep, err := h.up.Start(req)
	if err != nil {
		h.refuse(w, err)
		return
	}
	s := rep.Scope
	h.log.Info("fleet upgrade started", "fleet", rep.ID, "dry_run", rep.DryRun, "service", s.Service, "plan", s.Plan,
		"director", s.Director, "instances_named", len(s.Instances))
	w.Header().Set("Location", "/b/upgrades")
	httpjson.Write(w, http.StatusAccepted, rep)
}

// refuse answers why FleetUpgrades.Start refused: a rule out of its bounds (400),
// a fleet upgrade running, a follower or a disabled reconciler (409, as
// POST /b/reconcile answers the last two), else 503.
func (h upgradesHandler) refuse(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, reconciler.ErrBadUpgrade): // each rule out of its bounds, one a line
		httpjson.Write(w, http.StatusBadRequest, httpjson.Error{Error: "BadRequest", Description: strings.ReplaceAll(err.Error(), "\n", "; ")})
	case errors.Is(err, reconciler.ErrUpgradeRunning):
		httpjson.Write(w, http.StatusConflict, httpjson.Error{Error: "Conflict",
			Description: "cannot start a fleet upgrade: " + err.Error() + " (GET /b/upgrades shows it)"})
	case errors.Is(err, reconciler.ErrDisabled) || errors.Is(err, reconciler.ErrNotLeader):
		// ErrNotLeader names the daemon that runs the reconciler
		httpjson.Write(w, http.StatusConflict, httpjson.Error{Description: "cannot start a fleet upgrade: " + err.Error()})
	default:
		httpjson.Write(w, http.StatusServiceUnavailable, httpjson.Error{Description: "cannot start a fleet upgrade: " + err.Error()})
	}
}

// show answers GET /b/upgrades, listing at most ?instances= of the current
// fleet upgrade's instances.
func (h upgradesHandler) show(w http.ResponseWriter, r *http.Request) {
	listed, err := listedQuery(r)
	if err != nil {
		httpjson.Write(w, http.StatusBadRequest, httpjson.Error{Error: "BadRequest", Description: err.Error()})
		return
	}
	st, err := h.up.Status(r.Context())
	ans := upgradesAnswer{UpgradeStatus: st, Problems: []string{}}
	if err != nil {
		h.log.Warn("operator request failed", "what", "reading the upgrade journal", "error", err)
		ans.InFlight, ans.Quarantined = nil, nil // not read: not "none"
		ans.Problems = append(ans.Problems, "reading the upgrade journal: "+err.Error())
	}
	if c := ans.Current; c != nil && len(c.Instances) > listed {
		ans.InstancesLeftOff = len(c.Instances) - listed
		c.Instances = c.Instances[:listed]
	}
	httpjson.Write(w, http.StatusOK, ans)
}

// listedQuery reads ?instances=N (0 to maxListed, default defaultListed).
func listedQuery(r *http.Request) (int, error) {
	v, given, err := once(r.URL.Query(), "instances")
	if err != nil || !given {
		return defaultListed, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxListed {
		return 0, fmt.Errorf("instances=%q: want 0 to %d", v, maxListed)
	}
	return n, nil
}

package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// Director error codes of errands (cloudfoundry/bosh
// src/bosh-director/lib/bosh/director/errors.rb:115 and 320).
const (
	codeErrandNotFound = 70009  // JobNotFound
	codeRunErrand      = 510000 // RunErrandError
)

// ErrandOutcome is how the runs of an errand end on each instance they run
// on, as its agent would report them (Errand::Result: exit_code, stdout,
// stderr). In JSON as the admin API (/_sim/errands) takes it.
type ErrandOutcome struct {
	// Errand is the errand it scripts: an errand instance group's name or
	// an errand job's (Options.ErrandJobs). Required.
	Errand string `json:"errand"`
	// Deployment limits it to the runs of one deployment; one naming the
	// deployment wins over one for any. Default "": any deployment.
	Deployment string `json:"deployment,omitempty"`
	// ExitCode is the errand's exit code, 0 to 255: 0 succeeds, 1 to 128
	// errs, above 128 counts as cancelled (Errand::Result). Default 0.
	ExitCode int `json:"exit_code"`
	// Stdout is what the errand printed on its standard output. Default "".
	Stdout string `json:"stdout"`
	// Stderr is what it printed on its standard error. Default "".
	Stderr string `json:"stderr"`
}

// check refuses an outcome the simulator cannot script.
func (o ErrandOutcome) check() error {
	switch {
	case o.Errand == "":
		return fmt.Errorf("%w: errand outcome %+v names no errand", ErrBadOptions, o)
	case o.ExitCode < 0 || o.ExitCode > 255:
		return fmt.Errorf("%w: errand outcome of %q: exit code %d is not between 0 and 255", ErrBadOptions, o.Errand, o.ExitCode)
	}
	return nil
}

// ParseErrandOutcome reads an errand outcome written as comma-separated
// key=value pairs, e.g. "errand=smoke-tests,deployment=d,exit_code=1,stderr=boom"
// (keys: errand, deployment, exit_code, stdout, stderr; a value holds no
// comma; a "\n" in stdout or stderr is a newline). It is the syntax of the
// binary's -errand flag.
func ParseErrandOutcome(spec string) (ErrandOutcome, error) {
	var o ErrandOutcome
	err := simkit.ParseKeyValues("errand outcome", spec, func(key, value string) error {
		var err error
		switch key {
		case "errand":
			o.Errand = value
		case "deployment":
			o.Deployment = value
		case "exit_code":
			o.ExitCode, err = strconv.Atoi(value)
		case "stdout":
			o.Stdout = strings.ReplaceAll(value, `\n`, "\n")
		case "stderr":
			o.Stderr = strings.ReplaceAll(value, `\n`, "\n")
		default:
			err = errors.New("unknown key")
		}
		return err
	})
	if err != nil {
		return o, fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	return o, o.check()
}

// defaultOutcome is how an errand no outcome scripts ends on an instance.
func defaultOutcome(errand string, in instance) ErrandOutcome {
	return ErrandOutcome{Errand: errand, Stdout: fmt.Sprintf("%s: simulated errand run on %s\n", errand, in.name())}
}

// errands are the deployments' errands: the errand instance groups and the
// jobs run as errands (Options.ErrandJobs), their runs through "run errand"
// tasks, and the outcomes scripted for them. Its fields are guarded by
// store.mu.
type errands struct {
	db       *store
	rec      *recorder
	deploys  *deploys
	board    *taskBoard
	runner   *runner
	blobs    *blobs
	jobs     map[string]bool // jobs that run as errands wherever they are
	outcomes []ErrandOutcome // the scripted outcomes
	initial  []ErrandOutcome // Options.Errands, what a reset brings back
}

func newErrands(opts Options) *errands {
	er := &errands{jobs: map[string]bool{}, initial: slices.Clone(opts.Errands)}
	for _, j := range opts.ErrandJobs {
		er.jobs[j] = true
	}
	er.outcomes = slices.Clone(er.initial)
	return er
}

// outcomeLocked is how errand ends on in: the outcome scripted for its
// deployment, else for any deployment, else the default.
func (er *errands) outcomeLocked(deployment, errand string, in instance) ErrandOutcome {
	for _, dep := range []string{deployment, ""} {
		for _, o := range er.outcomes {
			if o.Errand == errand && o.Deployment == dep {
				return o
			}
		}
	}
	return defaultOutcome(errand, in)
}

// namesLocked are a deployment's errands as the Director lists them
// (deployments_controller.rb:562-577): its errand instance groups, then
// its jobs that run as errands, each once.
func (er *errands) namesLocked(dep *deployment) []string {
	out := []string{}
	if dep.content == nil {
		return out
	}
	for _, g := range dep.content.groups {
		if g.errand && !slices.Contains(out, g.name) {
			out = append(out, g.name)
		}
	}
	for _, g := range dep.content.groups {
		for _, j := range g.jobs {
			if er.jobs[j.name] && !slices.Contains(out, j.name) {
				out = append(out, j.name)
			}
		}
	}
	return out
}

// errandView is an errand as GET /deployments/:name/errands shows it.
type errandView struct {
	Name string `json:"name"`
}

// listErrands is GET /deployments/:name/errands.
func (er *errands) listErrands(w http.ResponseWriter, r *http.Request, _ string) {
	er.db.mu.RLock()
	dep, ok := er.deploys.deploymentLocked(w, r.PathValue("name"))
	var names []string
	if ok {
		names = er.namesLocked(dep)
	}
	er.db.mu.RUnlock()
	if !ok {
		return
	}
	out := make([]errandView, len(names))
	for i, n := range names {
		out[i] = errandView{Name: n}
	}
	writeJSON(w, http.StatusOK, out)
}

// errandFilter is an element of a run's "instances": an instance group,
// with an instance's index or id (or "first"), as the CLI's --instance
// sends it.
type errandFilter struct {
	Group string `json:"group"`
	ID    string `json:"id,omitempty"`
}

// errandRequest is what a run-errand task runs.
type errandRequest struct {
	name                   string
	keepAlive, whenChanged bool
	filters                []errandFilter
}

// postRun is POST /deployments/:name/errands/:errand_name/runs with the
// body the CLI sends ({"keep-alive", "when-changed", "instances"},
// deployments_controller.rb:543-560): a "run errand" task. Which errand it
// is, is found by the task, as the Director's RunErrand job finds it.
func (er *errands) postRun(w http.ResponseWriter, r *http.Request, user string) {
	var body struct {
		KeepAlive   bool           `json:"keep-alive"`
		WhenChanged bool           `json:"when-changed"`
		Instances   []errandFilter `json:"instances"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, codeValidationType, "Invalid JSON request body: %v", err)
		return
	}
	name, errand := r.PathValue("name"), r.PathValue("errand_name")
	er.db.mu.Lock()
	if _, ok := er.deploys.deploymentLocked(w, name); !ok {
		er.db.mu.Unlock()
		return
	}
	t := er.board.newTaskLocked(kindErrand, fmt.Sprintf("run errand %s from deployment %s", errand, name),
		name, user, r.Header.Get("X-Bosh-Context-Id"))
	t.errand = &errandRequest{name: errand, keepAlive: body.KeepAlive, whenChanged: body.WhenChanged, filters: body.Instances}
	er.db.mu.Unlock()
	er.runner.startTask(t)
	er.board.redirectToTask(w, t.id)
}

// errandResult is a line of a run-errand task's result output, in
// Errand::Result#to_hash's order (errand/result.rb:34-49).
type errandResult struct {
	Instance struct {
		Group string `json:"group"`
		ID    string `json:"id"`
	} `json:"instance"`
	ErrandName string `json:"errand_name"`
	ExitCode   int    `json:"exit_code"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	Logs       struct {
		BlobstoreID string `json:"blobstore_id"`
		SHA1        string `json:"sha1"`
	} `json:"logs"`
}

// adminErrands is the body of GET and PUT /_sim/errands; on PUT, an absent
// field is left as it is and a given one replaces all.
type adminErrands struct {
	Jobs     *[]string        `json:"jobs,omitempty"`
	Outcomes *[]ErrandOutcome `json:"outcomes,omitempty"`
}

// adminRoutes serves /_sim/errands: the errand jobs and the scripted
// outcomes.
func (er *errands) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /_sim/errands", func(w http.ResponseWriter, _ *http.Request) {
		er.db.mu.RLock()
		jobs := append([]string{}, slices.Sorted(maps.Keys(er.jobs))...)
		outcomes := append([]ErrandOutcome{}, er.outcomes...)
		er.db.mu.RUnlock()
		writeJSON(w, http.StatusOK, adminErrands{Jobs: &jobs, Outcomes: &outcomes})
	})
	mux.HandleFunc("PUT /_sim/errands", func(w http.ResponseWriter, r *http.Request) {
		var body adminErrands
		if !decodeAdmin(w, r, &body) {
			return
		}
		if err := er.set(body); err != nil {
			adminError(w, http.StatusBadRequest, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// set replaces the errand jobs or the outcomes a body gives; a refused body
// changes nothing.
func (er *errands) set(body adminErrands) error {
	if body.Outcomes != nil {
		for _, o := range *body.Outcomes {
			if err := o.check(); err != nil {
				return err
			}
		}
	}
	if body.Jobs != nil && slices.Contains(*body.Jobs, "") {
		return fmt.Errorf("%w: an errand job has no name", ErrBadOptions)
	}
	er.db.mu.Lock()
	defer er.db.mu.Unlock()
	if body.Outcomes != nil {
		er.outcomes = slices.Clone(*body.Outcomes)
	}
	if body.Jobs != nil {
		er.jobs = map[string]bool{}
		for _, j := range *body.Jobs {
			er.jobs[j] = true
		}
	}
	return nil
}

// reset brings back the outcomes of Options.Errands (POST /_sim/reset).
func (er *errands) reset() {
	er.db.mu.Lock()
	defer er.db.mu.Unlock()
	er.outcomes = slices.Clone(er.initial)
}

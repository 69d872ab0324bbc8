package sim

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// errandStep is an instance an errand runs on: the first instance of an
// errand instance group, whose VM is made for the run
// (Errand::LifecycleErrandStep), or an instance of a group with an errand
// job, which runs it on its own VM (Errand::LifecycleServiceStep).
type errandStep struct {
	in        instance
	lifecycle bool
}

// label is the instance as the Director's errand stages and events name it
// (DeploymentPlan::Instance#to_s): group/uuid (index).
func (s errandStep) label() string { return fmt.Sprintf("%s (%d)", s.in.name(), s.in.index) }

// errandPlan is what a run-errand task runs.
type errandPlan struct {
	steps    []errandStep
	warnings []string // the Director's event log warnings, in order
	compile  bool     // an errand instance group runs: its packages are compiled first
	hash     string   // the state when_changed compares (ParallelStep#state_hash)
}

// planLocked finds what a run-errand task runs, as
// Errand::ErrandProvider#get does (errand_provider.rb:12-110). A refusal
// ends the task in error; inStage says it fails inside "Preparing
// deployment" (the stopped instances are refused before).
func (er *errands) planLocked(t *task) (plan errandPlan, refusal *outcome, inStage bool) {
	req := t.errand
	dep := er.db.deployments[t.deployment]
	if dep == nil {
		return plan, &outcome{StateError, fmt.Sprintf("Deployment '%s' doesn't exist", t.deployment), codeDeploymentNotFound}, false
	}
	all := instancesOf(dep)
	matched, unmatched := matchInstances(req.filters, all)
	var stopped []string
	for _, in := range matched {
		if in.state == instStopped {
			stopped = append(stopped, "'"+in.name()+"'")
		}
	}
	if len(stopped) > 0 { // Config.allow_errands_on_stopped_instances is false by default
		return plan, &outcome{StateError, fmt.Sprintf("Instance(s) %s is stopped, unable to run errand. Maybe start vm?",
			strings.Join(stopped, ",")), codeRunErrand}, false
	}
	groups, refusal := er.errandGroupsLocked(dep, req, &plan)
	if refusal != nil {
		return plan, refusal, true
	}
	for _, g := range groups {
		plan.addSteps(g, matched)
	}
	if len(unmatched) > 0 { // a RuntimeError: the Director's generic code
		parts := make([]string, len(unmatched))
		for i, f := range unmatched {
			parts[i] = f.String()
		}
		return plan, &outcome{StateError, "No instances match selection criteria: [" + strings.Join(parts, ", ") + "]", codeDirector}, true
	}
	plan.hash = stateHash(plan.steps, dep.manifestText())
	return plan, nil, false
}

// errandGroupsLocked are the instance groups an errand runs in: those with
// a job of its name that runs as an errand, else the errand instance group
// of its name (errand_provider.rb:46-60, 114-130).
func (er *errands) errandGroupsLocked(dep *deployment, req *errandRequest, plan *errandPlan) ([]*group, *outcome) {
	var groups []*group
	var named *group
	if dep.content != nil {
		for i := range dep.content.groups {
			g := &dep.content.groups[i]
			if g.name == req.name {
				named = g
			}
			for _, j := range g.jobs {
				if j.name == req.name && er.jobs[j.name] {
					groups = append(groups, g)
				}
			}
		}
	}
	if len(groups) > 0 {
		if named != nil {
			plan.warnings = append(plan.warnings, fmt.Sprintf("Ambiguous request: the requested errand name '%s' matches both a job "+
				"name and an errand instance group name. Executing errand on all relevant instances with job '%s'.", req.name, req.name))
		}
		return groups, nil
	}
	switch {
	case named == nil:
		return nil, &outcome{StateError, fmt.Sprintf("Errand '%s' doesn't exist", req.name), codeErrandNotFound}
	case !named.errand:
		return nil, &outcome{StateError, fmt.Sprintf("Instance group '%s' is not an errand. To mark an instance group as an errand "+
			"set its lifecycle to 'errand' in the deployment manifest.", named.name), codeRunErrand}
	case named.instances == 0:
		return nil, &outcome{StateError, fmt.Sprintf("Instance '%s/%s/0' doesn't exist", dep.name, named.name), codeInstanceNotFound}
	case len(req.filters) > 0:
		return nil, &outcome{StateError, "Filtering by instances is not supported when running errand by instance group name", codeRunErrand}
	}
	return []*group{named}, nil
}

// addSteps adds the steps of an instance group the errand runs in, among
// the matched instances: the group's first instance for an errand instance
// group, else every matched instance with a VM.
func (p *errandPlan) addSteps(g *group, matched []instance) {
	var mine []instance
	for _, in := range matched {
		if in.job == g.name {
			mine = append(mine, in)
		}
	}
	if len(mine) > 1 {
		p.warnings = append(p.warnings, "Executing errand on multiple instances in parallel. "+
			"Use the `--instance` flag to run the errand on a single instance.")
	}
	if g.errand {
		p.compile = true
		if i := slices.IndexFunc(mine, func(in instance) bool { return in.index == 0 }); i >= 0 {
			p.steps = append(p.steps, errandStep{in: mine[i], lifecycle: true})
		}
		return
	}
	for _, in := range mine {
		s := errandStep{in: in}
		if !in.expectsVM {
			p.warnings = append(p.warnings, fmt.Sprintf("Skipping instance: %s no matching VM reference was found", s.label()))
			continue
		}
		p.steps = append(p.steps, s)
	}
}

// stateHash is what a successful run records and when_changed compares
// (ParallelStep#state_hash, parallel_step.rb:63-65): the SHA1 of the sorted
// hashes of the steps, each of its instance's uuid, configuration and
// packages (lifecycle_errand_step.rb:36-44). The simulator renders no
// templates: an instance's configuration is its deployment's manifest.
func stateHash(steps []errandStep, manifest string) string {
	hashes := make([]string, len(steps))
	for i, s := range steps {
		h := sha1.Sum([]byte(s.in.id + manifest))
		hashes[i] = hex.EncodeToString(h[:])
	}
	slices.Sort(hashes)
	h := sha1.Sum([]byte(strings.Join(hashes, "")))
	return hex.EncodeToString(h[:])
}

// matchInstances is Errand::InstanceMatcher#match
// (instance_matcher.rb:14-31): every instance when there is no filter;
// else those a filter matches, and the filters that matched none.
func matchInstances(filters []errandFilter, all []instance) (matched []instance, unmatched []errandFilter) {
	if len(filters) == 0 {
		return all, nil
	}
	seen := map[string]bool{}
	for _, f := range filters {
		hit := false
		for _, in := range all {
			if f.matches(in, all) {
				hit = true
				if !seen[in.id] {
					seen[in.id] = true
					matched = append(matched, in)
				}
			}
		}
		if !hit && len(all) > 0 {
			unmatched = append(unmatched, f)
		}
	}
	return matched, unmatched
}

// matches is Errand::InstanceFilter#matches? (instance_matcher.rb:44-56):
// the group, and the index or id when given ("first": the group's
// instance with the smallest uuid).
func (f errandFilter) matches(in instance, all []instance) bool {
	switch {
	case in.job != f.Group:
		return false
	case f.ID == "":
		return true
	case f.ID == "first":
		first := ""
		for _, o := range all {
			if o.job == f.Group && (first == "" || o.id < first) {
				first = o.id
			}
		}
		return in.id == first
	}
	return in.id == f.ID || strconv.Itoa(in.index) == f.ID
}

// String is the filter as the Director's error shows the request's hash
// (Ruby 4's Hash#inspect).
func (f errandFilter) String() string {
	if f.ID == "" {
		return fmt.Sprintf(`{"group" => %q}`, f.Group)
	}
	return fmt.Sprintf(`{"group" => %q, "id" => %q}`, f.Group, f.ID)
}

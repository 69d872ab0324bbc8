package platform

import (
	"cmp"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Input is what a run knows of the broker's side, to hold against a view.
type Input struct {
	// Index is the instance index as the run read it.
	Index map[string]*vault.Record
	// Listed says whether a Director of the run lists the deployment.
	Listed func(deployment string) bool
	// OutOfRun says whether the record's Director is out of the run (could
	// not be listed): its deployment may exist.
	OutOfRun func(rec *vault.Record) bool
	// Claimed says whether the run matched a listed deployment to the
	// instance (a platform-only instance the run adopts).
	Claimed func(id string) bool
	// Start and Grace are the run's start and the orphan grace period: a
	// record younger than Grace is not judged.
	Start time.Time
	Grace time.Duration
	// Limit bounds the report's lists; 0 (or less): report.MaxPlatformListed.
	Limit int
}

// Judged is every instance's state, and the orphan deployments and the
// records not judged (by id), for the absent document.
type Judged struct {
	States            map[string]string
	OrphanDeployments []string
	Unchecked         []string
	Report            report.PlatformReport
}

// Classify holds in against v. Instances are matched by guid only.
func Classify(v *View, in Input) Judged {
	j := Judged{States: make(map[string]string, len(in.Index)+len(v.Instances))}
	counts := make(map[string]int, len(States))
	for _, s := range States {
		counts[s] = 0
	}
	var listed []report.PlatformInstance
	for id, rec := range in.Index {
		state := judge(v, in, id, rec)
		if state == "" {
			j.Unchecked = append(j.Unchecked, id)
			continue
		}
		j.States[id] = state
		counts[state]++
		if state == report.OrphanDeployment {
			j.OrphanDeployments = append(j.OrphanDeployments, id)
			pi := report.PlatformInstance{InstanceID: id, State: state, Deployment: rec.Deployment(id),
				PlanID: rec.PlanID, Director: rec.Director}
			if rec.Retiring != nil {
				pi.DeleteAfter, _ = time.Parse(time.RFC3339, rec.Retiring.DeleteAfter)
			}
			listed = append(listed, pi)
		}
	}
	var only []report.PlatformInstance
	for guid, pin := range v.Instances {
		if _, ok := in.Index[guid]; ok {
			continue
		}
		state := report.PlatformOnly
		if pin.Creating() {
			state = report.Creating
		}
		j.States[guid] = state
		counts[state]++
		if state == report.PlatformOnly {
			pi := report.PlatformInstance{InstanceID: guid, State: state, PlanID: pin.PlanID, Platform: pin.Record()}
			if in.Claimed(guid) || in.Listed(pin.PlanID+"-"+guid) {
				pi.Restorable = "deployment"
			}
			only = append(only, pi)
		}
	}
	slices.Sort(j.OrphanDeployments)
	slices.Sort(j.Unchecked)
	limit := in.Limit
	if limit <= 0 {
		limit = report.MaxPlatformListed
	}
	byID := func(a, b report.PlatformInstance) int { return cmp.Compare(a.InstanceID, b.InstanceID) }
	slices.SortFunc(listed, byID)
	slices.SortFunc(only, byID)
	j.Report = report.PlatformReport{State: report.PlatformKnown, ReadAt: v.ReadAt, Requests: v.Requests,
		Seconds: v.Took.Seconds(), Plans: v.Plans, Instances: len(v.Instances), Counts: counts, Unchecked: len(j.Unchecked),
		OrphanDeployments: listed[:min(len(listed), limit)],
		PlatformOnly:      only[:min(len(only), limit)]}
	if j.Report.OrphanDeployments == nil {
		j.Report.OrphanDeployments = []report.PlatformInstance{}
	}
	if j.Report.PlatformOnly == nil {
		j.Report.PlatformOnly = []report.PlatformInstance{}
	}
	return j
}

// judge is one record's state, "" when it is not judged: its Director is
// out of the run, or (for a record whose deployment runs and that the
// platform lacks) it is younger than the grace period, was created after
// the view was read, or has an operation in progress (a provision the
// platform may not show yet, a deprovision under way).
func judge(v *View, in Input, id string, rec *vault.Record) string {
	if rec == nil || in.OutOfRun(rec) {
		return ""
	}
	_, onPlatform := v.Instances[id]
	deployed := in.Listed(rec.Deployment(id))
	switch {
	case onPlatform && deployed:
		return report.InStep
	case onPlatform && rec.Orphaned:
		return report.OrphanOnPlatform
	case onPlatform: // not listed, not flagged yet: the orphaner decides first
		return ""
	case !deployed && rec.Orphaned:
		return report.Absent
	case !deployed:
		return ""
	}
	created := time.Unix(rec.Created, 0)
	if rec.OperationInProgress() || (rec.Created != 0 && (in.Start.Sub(created) < in.Grace || !created.Before(v.ReadAt))) {
		return ""
	}
	if !v.CouldList(rec) {
		return report.NotPlatforms
	}
	return report.OrphanDeployment
}

// CloudFoundry is the OSB context's platform of an instance Cloud Foundry
// made.
const CloudFoundry = "cloudfoundry"

// CouldList says whether the platform read could have listed rec's
// instance: its plan is among the broker's plans the platform lists, and
// its recorded context names Cloud Foundry (or none: a record made before
// contexts were kept). An instance another platform made (Kubernetes, say)
// or of a plan the platform does not list is not the platform's to judge.
func (v *View) CouldList(rec *vault.Record) bool {
	if p := rec.Context["platform"]; p != "" && p != CloudFoundry {
		return false
	}
	return v.PlanIDs[rec.PlanID]
}

// Fill completes the report's orphan deployments with the absent
// document's proof and the platform-only ones' restorable "backup" (has,
// asked for those not restorable from a deployment).
func Fill(rep *report.PlatformReport, doc Doc, has func(id string) bool) {
	for i := range rep.OrphanDeployments {
		if e, ok := doc.Absent[rep.OrphanDeployments[i].InstanceID]; ok {
			rep.OrphanDeployments[i].AbsentSince, rep.OrphanDeployments[i].Reads = time.Unix(e.Since, 0).UTC(), e.Reads
		}
	}
	for i := range rep.PlatformOnly {
		p := &rep.PlatformOnly[i]
		switch {
		case p.Restorable != "":
		case has != nil && has(p.InstanceID):
			p.Restorable = "backup"
		default:
			p.Restorable = "nothing"
		}
	}
}

// Unknown is the report of a run that could not read the platform whole.
func Unknown(reason string, requests int, took time.Duration, last *View) report.PlatformReport {
	rep := report.PlatformReport{State: report.PlatformUnknown, Reason: reason, Fresh: true, Requests: requests,
		Seconds: took.Seconds(), Counts: map[string]int{}, OrphanDeployments: []report.PlatformInstance{},
		PlatformOnly: []report.PlatformInstance{}}
	if last != nil {
		rep.ReadAt = last.ReadAt
	}
	return rep
}

// States are the states a report counts, for the gauges.
var States = []string{report.InStep, report.OrphanDeployment, report.PlatformOnly, report.OrphanOnPlatform,
	report.Creating, report.Absent, report.NotPlatforms}

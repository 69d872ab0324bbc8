package versions

import (
	"slices"
	"strings"

	"github.com/cloudfoundry-community/gogobosh"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// maxLags bounds what an instance is listed behind on (a hostile manifest
// may ask for the latest of thousands of releases).
const maxLags = 20

// Candidate is an instance whose manifest asks for the latest of releases
// or stemcells.
type Candidate struct {
	InstanceID, ServiceID, PlanID, Deployment, Director string
	// Asks are what its manifest asks for as the latest.
	Asks []match.Latest
	// Releases are the release versions its deployment runs (the listing's).
	Releases []gogobosh.Resource
}

// Uploads are what a Director says it has uploaded; a part whose answer
// failed (or was not asked) is not known, and nothing is judged on it.
type Uploads struct {
	Releases       []bosh.Release
	Stemcells      []bosh.Stemcell
	ReleasesKnown  bool
	StemcellsKnown bool
}

// Lags are what c asks for as the latest and runs an older version of than
// the newest u has uploaded (of the prefix it asks for), at most maxLags.
// The running version of a stemcell is the highest of its versions whose
// GET /stemcells entry names c's deployment; a release or stemcell whose
// running version is not known is not judged.
func Lags(c Candidate, u Uploads) []report.Lag {
	var out []report.Lag
	for _, a := range c.Asks {
		l := report.Lag{Type: "release", Name: a.Name}
		switch {
		case a.Stemcell && u.StemcellsKnown:
			l.Type = "stemcell"
			l.Running, l.Newest = stemcellVersions(a, c.Deployment, u.Stemcells)
		case !a.Stemcell && u.ReleasesKnown:
			l.Running, l.Newest = releaseVersions(a, c.Releases, u.Releases)
		default:
			continue
		}
		if l.Running == "" || l.Newest == "" || Compare(l.Newest, l.Running) <= 0 || slices.Contains(out, l) {
			continue
		}
		if out = append(out, l); len(out) == maxLags {
			break
		}
	}
	return out
}

// releaseVersions are the version of release a that the deployment runs
// and the newest uploaded of a's prefix.
func releaseVersions(a match.Latest, running []gogobosh.Resource, uploaded []bosh.Release) (run, newest string) {
	for _, r := range running {
		if r.Name == a.Name {
			run = r.Version
		}
	}
	for _, r := range uploaded {
		if r.Name != a.Name {
			continue
		}
		for _, v := range r.Versions {
			if HasPrefix(v.Version, a.Prefix) {
				newest = higher(newest, v.Version)
			}
		}
	}
	return run, newest
}

// stemcellVersions are the highest version of stemcell a that deployment
// uses and the newest uploaded, both of a's prefix.
func stemcellVersions(a match.Latest, deployment string, uploaded []bosh.Stemcell) (run, newest string) {
	for _, s := range uploaded {
		if (a.OS && s.OperatingSystem != a.Name) || (!a.OS && s.Name != a.Name) || !HasPrefix(s.Version, a.Prefix) {
			continue
		}
		newest = higher(newest, s.Version)
		if slices.Contains(s.Deployments, bosh.StemcellUser{Name: deployment}) {
			run = higher(run, s.Version)
		}
	}
	return run, newest
}

// higher is the higher of two versions, "" the lowest.
func higher(cur, v string) string {
	if cur == "" || Compare(v, cur) > 0 {
		return v
	}
	return cur
}

// SummarizeBehind is a run's report of the instances behind: every one
// counted, by plan (every plan of an instance asking, 0 included), the
// first maxListed listed by instance id; asking and unknown are counted as
// the run found them, errs are the Directors that could not be asked.
func SummarizeBehind(list []report.Behind, askingPlans map[string]int, unknown int, errs []string) *report.BehindReport {
	r := &report.BehindReport{Count: len(list), ByPlan: map[string]int{}, Unknown: unknown,
		Errors: append([]string{}, errs...), ByInstance: make(map[string][]report.Lag, len(list))}
	for plan, n := range askingPlans {
		r.ByPlan[plan], r.Asking = 0, r.Asking+n
	}
	list = slices.SortedFunc(slices.Values(list), func(a, b report.Behind) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	for _, b := range list {
		r.ByPlan[b.PlanID]++
		r.ByInstance[b.InstanceID] = b.Lags
	}
	r.Instances = append([]report.Behind{}, list[:min(len(list), maxListed)]...)
	return r
}

package sim

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// releaseVersion is a release version the Director holds: uploaded
// (Options.Releases, UploadRelease), or named by a manifest it applied.
type releaseVersion struct {
	commit string
	jobs   map[string]bool
}

// stemcell is an uploaded stemcell.
type stemcell struct {
	id      int
	os, cid string
}

type releaseView struct {
	Name            string               `json:"name"`
	ReleaseVersions []releaseVersionView `json:"release_versions"`
}

type releaseVersionView struct {
	Version            string   `json:"version"`
	CommitHash         string   `json:"commit_hash"`
	UncommittedChanges bool     `json:"uncommitted_changes"`
	CurrentlyDeployed  bool     `json:"currently_deployed"`
	JobNames           []string `json:"job_names"`
}

type stemcellView struct {
	Name            string           `json:"name"`
	OperatingSystem string           `json:"operating_system"`
	Version         string           `json:"version"`
	CID             string           `json:"cid"`
	CPI             string           `json:"cpi"`
	Deployments     []deploymentName `json:"deployments"`
	APIVersion      int              `json:"api_version"`
	ID              int              `json:"id"`
}

type deploymentName struct {
	Name string `json:"name"`
}

// artifacts are the releases and stemcells the Director holds: uploaded
// (Options.Releases and Stemcells, UploadRelease, UploadStemcell) or named
// by a manifest it applied; it answers GET /releases and GET /stemcells.
type artifacts struct {
	db *store
}

// registerLocked records the releases (with their jobs) and stemcells a
// deployment's content uses.
func (art *artifacts) registerLocked(c *content) {
	for _, r := range c.releases {
		if art.db.releases[r.Name] == nil {
			art.db.releases[r.Name] = map[string]*releaseVersion{}
		}
		rv := art.db.releases[r.Name][r.Version]
		if rv == nil {
			rv = &releaseVersion{commit: stableUUID(r.Name, r.Version)[:8], jobs: map[string]bool{}}
			art.db.releases[r.Name][r.Version] = rv
		}
		for _, g := range c.groups {
			for _, j := range g.jobs {
				if j.release == r.Name {
					rv.jobs[j.name] = true
				}
			}
		}
	}
	for _, r := range c.releases {
		art.db.uploads.addRelease(r.Name, r.Version)
	}
	for i, s := range c.stemcells {
		art.db.uploads.addStemcell(c.stemcellOS[i], s.Version)
		art.db.uploads.addStemcell(s.Name, s.Version)
		if art.db.stemcells[s] == nil {
			art.db.stemcells[s] = &stemcell{id: len(art.db.stemcells) + 1, os: c.stemcellOS[i], cid: "sc-" + stableUUID(s.Name, s.Version)}
		}
	}
}

// listReleases is GET /releases.
func (art *artifacts) listReleases(w http.ResponseWriter, _ *http.Request, _ string) {
	art.db.mu.RLock()
	deployed := map[nameVersion]bool{}
	for _, dep := range art.db.deployments {
		if dep.content != nil {
			for _, r := range dep.content.releases {
				deployed[r] = true
			}
		}
	}
	out := make([]releaseView, 0, len(art.db.releases))
	for name, versions := range art.db.releases {
		rv := releaseView{Name: name, ReleaseVersions: []releaseVersionView{}}
		for v, rel := range versions {
			jobs := sortedKeys(rel.jobs)
			rv.ReleaseVersions = append(rv.ReleaseVersions, releaseVersionView{Version: v, CommitHash: rel.commit,
				CurrentlyDeployed: deployed[nameVersion{name, v}], JobNames: jobs})
		}
		slices.SortFunc(rv.ReleaseVersions, func(a, b releaseVersionView) int { return compareVersions(a.Version, b.Version) })
		out = append(out, rv)
	}
	art.db.mu.RUnlock()
	slices.SortFunc(out, func(a, b releaseView) int { return strings.Compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, out)
}

// listStemcells is GET /stemcells.
func (art *artifacts) listStemcells(w http.ResponseWriter, _ *http.Request, _ string) {
	art.db.mu.RLock()
	users := map[nameVersion][]deploymentName{}
	for _, dep := range art.db.deployments {
		if dep.content != nil {
			for _, s := range dep.content.stemcells {
				users[s] = append(users[s], deploymentName{dep.name})
			}
		}
	}
	out := make([]stemcellView, 0, len(art.db.stemcells))
	for nv, s := range art.db.stemcells {
		deps := users[nv]
		slices.SortFunc(deps, func(a, b deploymentName) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, stemcellView{Name: nv.Name, OperatingSystem: s.os, Version: nv.Version, CID: s.cid,
			Deployments: append([]deploymentName{}, deps...), APIVersion: 3, ID: s.id})
	}
	art.db.mu.RUnlock()
	slices.SortFunc(out, func(a, b stemcellView) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), compareVersions(a.Version, b.Version))
	})
	writeJSON(w, http.StatusOK, out)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// compareVersions orders versions part by part, numerically where both
// parts are numbers: 16.1.0 < 16.10.0.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range min(len(pa), len(pb)) {
		na, errA := strconv.Atoi(pa[i])
		nb, errB := strconv.Atoi(pb[i])
		c := strings.Compare(pa[i], pb[i])
		if errA == nil && errB == nil {
			c = cmp.Compare(na, nb)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}

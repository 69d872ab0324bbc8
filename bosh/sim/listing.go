package sim

import (
	"net/http"
	"slices"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// The GET /deployments exclude_* flags; a listing variant is a set of them.
const (
	excludeConfigs = 1 << iota
	excludeReleases
	excludeStemcells
	excludeLock
	listingVariants = 1 << iota
)

// listingEntry is one deployment of GET /deployments; nil fields are excluded.
type listingEntry struct {
	Name        string         `json:"name"`
	Teams       []string       `json:"teams"`
	CloudConfig *string        `json:"cloud_config,omitempty"`
	Stemcells   *[]nameVersion `json:"stemcells,omitempty"`
	Releases    *[]nameVersion `json:"releases,omitempty"`
	Locked      *bool          `json:"locked,omitempty"`
}

var (
	noTeams        = []string{}
	noNameVersions = []nameVersion{}
	cloudConfigs   = [...]string{"none", "latest", "outdated"}
	lockedValues   = [...]bool{false, true}
)

var excludeParams = [...]string{"exclude_configs", "exclude_releases", "exclude_stemcells", "exclude_lock"}

// listingVariant reads the exclude_* query parameters (bit i = excludeParams[i]).
func listingVariant(r *http.Request) int {
	q := r.URL.Query()
	v := 0
	for i, name := range excludeParams {
		if q.Get(name) == "true" {
			v |= 1 << i
		}
	}
	return v
}

func (dp *deploys) listDeployments(w http.ResponseWriter, r *http.Request, _ string) {
	writeRawJSON(w, http.StatusOK, dp.listing(listingVariant(r)))
}

// listing is the JSON of GET /deployments, built once per variant and kept
// until the deployments or their locks change.
func (dp *deploys) listing(v int) []byte {
	dp.db.mu.RLock()
	b := dp.db.listing[v]
	dp.db.mu.RUnlock()
	if b != nil {
		return b
	}
	dp.db.mu.Lock()
	defer dp.db.mu.Unlock()
	if b := dp.db.listing[v]; b != nil {
		return b
	}
	b = simkit.JSON(dp.listingEntriesLocked(v))
	dp.db.listing[v] = b
	return b
}

func (dp *deploys) listingEntriesLocked(v int) []listingEntry {
	names := make([]string, 0, len(dp.db.deployments))
	for name := range dp.db.deployments {
		names = append(names, name)
	}
	slices.Sort(names)
	latest := dp.configs.latestCloudLocked()
	out := make([]listingEntry, len(names))
	for i, name := range names {
		dep := dp.db.deployments[name]
		e := listingEntry{Name: name, Teams: noTeams}
		if v&excludeConfigs == 0 {
			e.CloudConfig = &cloudConfigs[cloudConfigState(dep.cloudConfig, latest)]
		}
		rels, stems := &noNameVersions, &noNameVersions
		if dep.content != nil {
			rels, stems = &dep.content.releases, &dep.content.stemcells
		}
		if v&excludeStemcells == 0 {
			e.Stemcells = stems
		}
		if v&excludeReleases == 0 {
			e.Releases = rels
		}
		if v&excludeLock == 0 {
			_, locked := dp.db.locks[name]
			e.Locked = &lockedValues[btoi(locked)]
		}
		out[i] = e
	}
	return out
}

func cloudConfigState(id, latest int) int {
	switch {
	case id == 0:
		return 0
	case id == latest:
		return 1
	default:
		return 2
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

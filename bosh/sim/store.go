package sim

import "sync"

// store is the simulator's state: what the Director holds, under one
// mutex. Every part of the Director shares it: a request, a task and a
// knob touching several resources (a deploy changes a deployment, its
// locks, its events and the cached listings) see them change together.
type store struct {
	mu            sync.RWMutex
	deployments   map[string]*deployment
	tasks         []*task // tasks[i].id == i+1
	taskBase      int     // Stats count tasks with ids above this
	queue         taskQueue
	events        eventLog
	locks         map[string]*lock
	configs       []config
	releases      map[string]map[string]*releaseVersion
	stemcells     map[nameVersion]*stemcell
	outcomes      map[string][]string // deployment ("" = any) -> states of its next tasks
	listing       [listingVariants][]byte
	uploads       *uploads          // nil: every release and stemcell counts as uploaded
	resources     map[string][]byte // logs tarballs by blobstore id
	resourceOrder []string          // their ids, oldest first
}

func newStore() *store {
	return &store{
		deployments: map[string]*deployment{},
		locks:       map[string]*lock{},
		configs:     []config{newConfig(1, "cloud", "default", DefaultCloudConfig)},
		releases:    map[string]map[string]*releaseVersion{},
		stemcells:   map[nameVersion]*stemcell{},
		outcomes:    map[string][]string{},
	}
}

// invalidateLocked drops the cached listings of GET /deployments: they
// show deployments, their configs, releases, stemcells and locks, and each
// of those changes calls it.
func (db *store) invalidateLocked() { db.listing = [listingVariants][]byte{} }

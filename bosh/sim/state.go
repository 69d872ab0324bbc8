package sim

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// infoStemcellVersion is the stemcell version /info reports and "latest"
// resolves to.
const infoStemcellVersion = "1.506"

// nameVersion is a release or stemcell as the deployments listing shows it.
type nameVersion struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type job struct{ name, release string }

// group is an instance group of a deployed manifest.
type group struct {
	name      string
	instances int
	azs       []string
	jobs      []job
	vmType    string
	stemcell  nameVersion
	errand    bool
	disk      bool
	staticIPs []string
}

// content is what a manifest gives a deployment. Deployments seeded from the
// same plan share one.
type content struct {
	releases   []nameVersion
	stemcells  []nameVersion
	stemcellOS []string // operating system of each of stemcells
	groups     []group
}

// deployment is a deployment the Director holds.
type deployment struct {
	name        string
	manifest    string
	seed        *seedInfo             // when set, the manifest is rendered from it
	content     *content              // nil until a first deploy succeeds
	cloudConfig int                   // id of the cloud config it was deployed with; 0 = none
	createdAt   time.Time             // when its VMs were created
	inst        map[string]*instState // by instance id; what happened to its instances
}

// manifestText is the manifest exactly as it was posted.
func (dep *deployment) manifestText() string {
	if dep.seed != nil {
		return dep.seed.render()
	}
	return dep.manifest
}

// store is the Director's state, guarded by Director.mu.
type store struct {
	deployments   map[string]*deployment
	tasks         []*task // tasks[i].id == i+1
	taskBase      int     // Stats count tasks with ids above this
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

func newStore() store {
	return store{
		deployments: map[string]*deployment{},
		locks:       map[string]*lock{},
		configs:     []config{newConfig(1, "cloud", "default", DefaultCloudConfig)},
		releases:    map[string]map[string]*releaseVersion{},
		stemcells:   map[nameVersion]*stemcell{},
		outcomes:    map[string][]string{},
	}
}

// contentOf turns a validated manifest into deployment content.
func contentOf(doc *manifestDoc) *content {
	c := &content{releases: []nameVersion{}, stemcells: []nameVersion{}}
	for _, r := range doc.Releases {
		c.releases = append(c.releases, nameVersion{r.Name, r.Version})
	}
	aliases := map[string]nameVersion{}
	for _, s := range doc.Stemcells {
		nv := nameVersion{stemcellName(s.OS, s.Name), s.Version}
		if nv.Version == "latest" {
			nv.Version = infoStemcellVersion
		}
		aliases[s.Alias] = nv
		c.stemcells = append(c.stemcells, nv)
		c.stemcellOS = append(c.stemcellOS, or(s.OS, "ubuntu-jammy"))
	}
	for _, g := range doc.InstanceGroups {
		if g.Stemcell == "" && len(doc.Stemcells) == 1 {
			g.Stemcell = doc.Stemcells[0].Alias // the only stemcell is everyone's
		}
		c.groups = append(c.groups, groupOf(g, aliases))
	}
	return c
}

func groupOf(g groupDoc, aliases map[string]nameVersion) group {
	out := group{
		name: g.Name, instances: *g.Instances, azs: g.AZs, vmType: g.VMType,
		stemcell: aliases[g.Stemcell], errand: g.Lifecycle == "errand",
		disk: g.PersistentDisk > 0 || g.PersistentDiskType != "",
	}
	for _, j := range g.Jobs {
		out.jobs = append(out.jobs, job{j.Name, j.Release})
	}
	for _, n := range g.Networks {
		out.staticIPs = append(out.staticIPs, n.StaticIPs...)
	}
	return out
}

// stemcellName is the uploaded stemcell a manifest's os resolves to.
func stemcellName(os, name string) string {
	if name != "" {
		return name
	}
	return "bosh-vsphere-esxi-" + os + "-go_agent"
}

// placeholderLocked records a deployment as the Director does when a deploy
// is accepted: present, with no manifest, until its task succeeds.
func (d *Director) placeholderLocked(name string) {
	if _, ok := d.deployments[name]; !ok {
		d.deployments[name] = &deployment{name: name}
		d.invalidateLocked()
	}
}

// applyLocked makes a deployment hold a manifest and its content.
func (d *Director) applyLocked(name, manifest string, seed *seedInfo, c *content) {
	dep := d.deployments[name]
	if dep == nil {
		dep = &deployment{name: name}
		d.deployments[name] = dep
	}
	if dep.content == nil {
		dep.createdAt = time.Now().UTC().Truncate(time.Second)
	}
	dep.manifest, dep.seed, dep.content = manifest, seed, c
	dep.cloudConfig = d.latestCloudConfigLocked()
	d.registerLocked(c)
	d.invalidateLocked()
}

// PutDeployment creates or replaces a deployment at once, without a task,
// as if it had been changed behind the broker's back: it records the
// events of a deploy by AdminUser without a task (create or update, at
// start and at end). The manifest is kept byte for byte; an invalid one
// matches ErrInvalidManifest.
func (d *Director) PutDeployment(manifest string) error {
	name, doc, err := parseManifest(manifest)
	if err != nil {
		return fmt.Errorf("putting deployment %q: %w", name, err)
	}
	c := contentOf(doc)
	d.mu.Lock()
	defer d.mu.Unlock()
	action, before := "create", (*content)(nil)
	if dep := d.deployments[name]; dep != nil {
		action, before = "update", dep.content
	}
	d.applyLocked(name, manifest, nil, c)
	d.recordChangeLocked(action, name, before, c)
	return nil
}

// RemoveDeployment deletes a deployment at once, without a task, recording
// the events of a delete by AdminUser (at start and at end). A deployment
// that does not exist is left alone, and nothing is recorded.
func (d *Director) RemoveDeployment(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.deployments[name]; ok {
		delete(d.deployments, name)
		d.invalidateLocked()
		d.recordChangeLocked("delete", name, nil, nil)
	}
}

// RemoveAllDeployments deletes every deployment at once, recording one
// delete event by AdminUser for each, in the order of their names.
func (d *Director) RemoveAllDeployments() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events.grow(len(d.deployments))
	for _, name := range slices.Sorted(maps.Keys(d.deployments)) {
		d.recordLocked(adminEvent("delete", name))
	}
	clear(d.deployments)
	d.invalidateLocked()
}

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
	errandRuns  map[string]string     // by errand: the state of its last successful run, "" after a failed one (Models::ErrandRun)
}

// manifestText is the manifest exactly as it was posted.
func (dep *deployment) manifestText() string {
	if dep.seed != nil {
		return dep.seed.render()
	}
	return dep.manifest
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
func (dp *deploys) placeholderLocked(name string) {
	if _, ok := dp.db.deployments[name]; !ok {
		dp.db.deployments[name] = &deployment{name: name}
		dp.db.invalidateLocked()
	}
}

// applyLocked makes a deployment hold a manifest and its content.
func (dp *deploys) applyLocked(name, manifest string, seed *seedInfo, c *content) {
	dep := dp.db.deployments[name]
	if dep == nil {
		dep = &deployment{name: name}
		dp.db.deployments[name] = dep
	}
	if dep.content == nil {
		dep.createdAt = time.Now().UTC().Truncate(time.Second)
	}
	dep.manifest, dep.seed, dep.content = manifest, seed, c
	dep.cloudConfig = dp.configs.latestCloudLocked()
	dp.artifacts.registerLocked(c)
	dp.db.invalidateLocked()
}

// put creates or replaces a deployment at once, without a task, recording
// the events of a deploy by AdminUser (Director.PutDeployment).
func (dp *deploys) put(manifest string) error {
	name, doc, err := parseManifest(manifest)
	if err != nil {
		return fmt.Errorf("putting deployment %q: %w", name, err)
	}
	c := contentOf(doc)
	dp.db.mu.Lock()
	defer dp.db.mu.Unlock()
	action, before := "create", (*content)(nil)
	if dep := dp.db.deployments[name]; dep != nil {
		action, before = "update", dep.content
	}
	dp.applyLocked(name, manifest, nil, c)
	dp.rec.recordChangeLocked(action, name, before, c)
	return nil
}

// remove deletes a deployment at once, without a task, recording the
// events of a delete by AdminUser; nothing when there is none
// (Director.RemoveDeployment).
func (dp *deploys) remove(name string) {
	dp.db.mu.Lock()
	defer dp.db.mu.Unlock()
	if _, ok := dp.db.deployments[name]; ok {
		delete(dp.db.deployments, name)
		dp.db.invalidateLocked()
		dp.rec.recordChangeLocked("delete", name, nil, nil)
	}
}

// removeAll deletes every deployment at once, one delete event by
// AdminUser each, in the order of their names (Director.RemoveAllDeployments).
func (dp *deploys) removeAll() {
	dp.db.mu.Lock()
	defer dp.db.mu.Unlock()
	dp.db.events.grow(len(dp.db.deployments))
	for _, name := range slices.Sorted(maps.Keys(dp.db.deployments)) {
		dp.rec.recordLocked(adminEvent("delete", name))
	}
	clear(dp.db.deployments)
	dp.db.invalidateLocked()
}

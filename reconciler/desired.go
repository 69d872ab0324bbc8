package reconciler

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"slices"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// fingerprintVersion changes when what the reconciler writes changes, so that
// every record is checked again once after an upgrade.
const fingerprintVersion = "v2" // v2: the match (strategy, confidence, rule) is in the index record

// desired is what one matched instance's records should be, from what the
// Director runs, as the observer builds it; no later stage changes it. What
// the records take from the manifest beyond its digest waits for load.
type desired struct {
	match       Match
	deployment  string
	director    string // the Director that listed it (several Directors), else ""
	manifest    string
	manifestSHA string
	releases    []vault.Resource
	vms         []vault.VMSummary
	fingerprint string
	scan        *scanned
	prefetched  *prefetch // Vault read started beside the Director fetch, or nil
}

// target is a desired instance with what load reads from its manifest:
// the records the updater brings the instance to.
type target struct {
	*desired
	stemcells []vault.Resource
	// What the index record gets: the service and plan the manifest's
	// properties.blacksmith names for the instance, else the matcher's.
	serviceID, planID string
	props             *blacksmithProps // properties.blacksmith when it names the instance, else nil
}

// newDesired computes the records of a matched deployment; what it takes
// from the manifest (which the manifest's digest covers) waits for load.
func newDesired(d bosh.Deployment, s *scanned, m Match, pf *prefetch) *desired {
	w := &desired{match: m, deployment: d.Name, director: d.Director, manifest: s.manifest, manifestSHA: sha256Hex(s.manifest), scan: s,
		prefetched: pf}
	for _, r := range d.Releases {
		w.releases = append(w.releases, vault.Resource{Name: r.Name, Version: r.Version})
	}
	for _, v := range s.vms {
		w.vms = append(w.vms, vault.VMSummary{ID: v.ID, Job: v.Job, Index: v.Index, AZ: v.AZ, IPs: slices.Clone(v.IPs)})
	}
	slices.SortFunc(w.vms, func(a, b vault.VMSummary) int {
		return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.Index, b.Index), cmp.Compare(a.ID, b.ID))
	})
	w.fingerprint = w.digest()
	return w
}

// digest is the fingerprint kept in the index record: a warm run compares
// it and needs no other read when it is unchanged.
func (w *desired) digest() string {
	h := sha256.New()
	field := func(parts ...any) {
		for _, p := range parts {
			fmt.Fprintf(h, "%v\x1f", p)
		}
		h.Write([]byte{'\x1e'})
	}
	field(fingerprintVersion, w.match.InstanceID, w.match.ServiceID, w.match.PlanID, w.deployment, w.manifestSHA,
		w.match.Strategy, w.match.Confidence, w.match.Rule)
	if w.director != "" { // one Director: the fingerprints of before
		field("director", w.director)
	}
	writeResources(h, field, w.releases)
	for _, v := range w.vms {
		field(v.ID, v.Job, v.Index, v.AZ, v.IPs)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeResources(h hash.Hash, field func(...any), rs []vault.Resource) {
	for _, r := range rs {
		field(r.Name, r.Version)
	}
	h.Write([]byte{'\x1d'})
}

// load reads the stemcells and properties.blacksmith from the manifest; the
// service and plan it names for the instance win over the matcher's.
func (w *desired) load(m *matcher) (*target, error) {
	info, err := recordInfo(w.manifest, w.scan.info)
	if err != nil {
		return nil, retry.Terminal(err)
	}
	t := &target{desired: w}
	for _, st := range info.Stemcells {
		t.stemcells = append(t.stemcells, vault.Resource{Name: cmp.Or(st.OS, st.Name, st.Alias), Version: st.Version})
	}
	if p := info.blacksmith(); p != nil && p.InstanceID == w.match.InstanceID {
		t.props = p
	}
	refined := m.refine(w.match, t.props)
	t.serviceID, t.planID = refined.ServiceID, refined.PlanID
	return t, nil
}

// sameResources compares names and versions.
func sameResources(a, b []vault.Resource) bool {
	return slices.EqualFunc(a, b, func(x, y vault.Resource) bool { return x.Name == y.Name && x.Version == y.Version })
}

// sameVMs compares the VM fields the reconciler owns.
func sameVMs(a, b []vault.VMSummary) bool {
	return slices.EqualFunc(a, b, func(x, y vault.VMSummary) bool {
		return x.ID == y.ID && x.Job == y.Job && x.Index == y.Index && x.AZ == y.AZ && slices.Equal(x.IPs, y.IPs)
	})
}

// metadataDiffers says whether md (nil when absent) lacks what w wants.
func (w *target) metadataDiffers(md *vault.Metadata) bool {
	return md == nil || !sameResources(md.Releases, w.releases) ||
		!sameResources(md.Stemcells, w.stemcells) || !sameVMs(md.VMs, w.vms)
}

// nextMetadata is md (nil when absent) with the owned fields set; every
// other field, Properties and History included, is kept.
func (w *target) nextMetadata(md *vault.Metadata) *vault.Metadata {
	next := &vault.Metadata{}
	if md != nil {
		c := *md
		next = &c
	}
	next.Releases, next.Stemcells, next.VMs = w.releases, w.stemcells, w.vms
	return next
}

package records

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"

	"github.com/cloudfoundry-community/gogobosh"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// fingerprintVersion changes when what the reconciler writes changes, so that
// every record is checked again once after an upgrade.
const fingerprintVersion = "v2" // v2: the match (strategy, confidence, rule) is in the index record

// Desired is what one matched instance's records should be, from what the
// Director runs; nothing changes it once built. What the records take from
// the manifest beyond its digest waits for Load.
type Desired struct {
	Match       report.Match
	Deployment  string
	Director    string // the Director that listed it, as index records name it ("" with a single Director)
	ManifestSHA string
	Fingerprint string
	listed      []gogobosh.Resource // the releases the listing gives
	fetched     *fleet.Fetched
}

// Target is a desired instance with what Load reads from its manifest: the
// records the instance is brought to.
type Target struct {
	*Desired
	// Manifest is the manifest's text (the Desired has its digest only:
	// the cache keeps the text compressed, inflated for a write).
	Manifest  string
	releases  []vault.Resource
	vms       []vault.VMSummary
	stemcells []vault.Resource
	// What the index record gets: the service and plan the manifest's
	// properties.blacksmith names for the instance, else the matcher's.
	ServiceID, PlanID string
	props             *match.Props // properties.blacksmith when it names the instance, else nil
}

// New computes the records of a matched deployment; what they take from the
// manifest (which the manifest's digest covers) waits for Load. The
// fingerprint a run digested from a cached copy with the same match and
// listing entry is taken as it is (fleet.Memo): it depends on nothing else.
func New(d bosh.Deployment, f *fleet.Fetched, m report.Match) *Desired {
	w := &Desired{Match: m, Deployment: d.Name, Director: d.Director, ManifestSHA: f.ManifestSHA(), listed: d.Releases, fetched: f}
	if fp, ok := f.Memo(m, d); ok {
		w.Fingerprint = fp
		return w
	}
	w.Fingerprint = w.digest(releasesOf(d.Releases), vmsOf(f.VMs()))
	f.Remember(m, d, w.Fingerprint)
	return w
}

// releasesOf is the releases of a listing entry as records keep them.
func releasesOf(listed []gogobosh.Resource) []vault.Resource {
	var out []vault.Resource
	for _, r := range listed {
		out = append(out, vault.Resource{Name: r.Name, Version: r.Version})
	}
	return out
}

// Bounds of the VMs an instance's metadata keeps: a Director's listing (up
// to 32 MiB) is not trusted to be small.
const (
	maxVMs     = 1000
	maxVMIPs   = 16
	maxVMField = 256
)

// vmsOf is the VMs as records keep them, in order: at most maxVMs, each
// with at most maxVMIPs addresses and fields of maxVMField bytes.
func vmsOf(vms []bosh.VM) []vault.VMSummary {
	var out []vault.VMSummary
	for _, v := range vms[:min(len(vms), maxVMs)] {
		var ips []string
		for _, ip := range v.IPs[:min(len(v.IPs), maxVMIPs)] {
			ips = append(ips, report.Truncate(ip, maxVMField))
		}
		out = append(out, vault.VMSummary{ID: report.Truncate(v.ID, maxVMField), Job: report.Truncate(v.Job, maxVMField),
			Index: v.Index, AZ: report.Truncate(v.AZ, maxVMField), IPs: ips})
	}
	slices.SortFunc(out, func(a, b vault.VMSummary) int {
		return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.Index, b.Index), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// digest is the fingerprint kept in the index record: a warm run compares
// it and needs no other read when it is unchanged.
func (w *Desired) digest(releases []vault.Resource, vms []vault.VMSummary) string {
	var d digester
	d.field(fingerprintVersion, w.Match.InstanceID, w.Match.ServiceID, w.Match.PlanID, w.Deployment, w.ManifestSHA,
		string(w.Match.Strategy))
	d.float(w.Match.Confidence)
	d.str(w.Match.Rule)
	d.end()
	if w.Director != "" { // a single Director: the fingerprints of before
		d.field("director", w.Director)
		d.end()
	}
	for _, r := range releases {
		d.field(r.Name, r.Version)
		d.end()
	}
	d.b = append(d.b, '\x1d')
	for _, v := range vms {
		d.field(v.ID, v.Job)
		d.b = append(strconv.AppendInt(d.b, int64(v.Index), 10), '\x1f')
		d.field(v.AZ)
		d.b = append(d.b, '[')
		for i, ip := range v.IPs {
			if i > 0 {
				d.b = append(d.b, ' ')
			}
			d.b = append(d.b, ip...)
		}
		d.b = append(d.b, ']', '\x1f')
		d.end()
	}
	sum := sha256.Sum256(d.b)
	return hex.EncodeToString(sum[:])
}

// digester writes what the fingerprint covers: each part as fmt's %v
// writes it, followed by \x1f, each field ended by \x1e (the form
// fingerprints were first written in: a new form would make every record
// look changed). It appends, with no fmt call: a steady run digests every
// deployment, and fmt was most of it.
type digester struct{ b []byte }

func (d *digester) str(s string) { d.b = append(append(d.b, s...), '\x1f') }

func (d *digester) field(parts ...string) {
	for _, p := range parts {
		d.str(p)
	}
}

func (d *digester) float(f float64) { d.b = append(strconv.AppendFloat(d.b, f, 'g', -1, 64), '\x1f') }

func (d *digester) end() { d.b = append(d.b, '\x1e') }

// Load reads the stemcells and properties.blacksmith from the manifest; the
// service and plan it names for the instance win over the matcher's. A
// manifest that cannot be read is a terminal error.
func (w *Desired) Load(m *match.Matcher) (*Target, error) {
	text := w.fetched.Manifest()
	info, err := match.RecordInfo(text, w.fetched.Info)
	if err != nil {
		return nil, retry.Terminal(err)
	}
	t := &Target{Desired: w, Manifest: text, releases: releasesOf(w.listed), vms: vmsOf(w.fetched.VMs())}
	for _, st := range info.Stemcells {
		t.stemcells = append(t.stemcells, vault.Resource{Name: cmp.Or(st.OS, st.Name, st.Alias), Version: st.Version})
	}
	if p := info.Blacksmith(); p != nil && p.InstanceID == w.Match.InstanceID {
		t.props = p
	}
	refined := m.Refine(w.Match, t.props)
	t.ServiceID, t.PlanID = refined.ServiceID, refined.PlanID
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
func (w *Target) metadataDiffers(md *vault.Metadata) bool {
	return md == nil || !sameResources(md.Releases, w.releases) ||
		!sameResources(md.Stemcells, w.stemcells) || !sameVMs(md.VMs, w.vms)
}

// nextMetadata is md (nil when absent) with the owned fields set; every
// other field, Properties and History included, is kept.
func (w *Target) nextMetadata(md *vault.Metadata) *vault.Metadata {
	next := &vault.Metadata{}
	if md != nil {
		c := *md
		next = &c
	}
	next.Releases, next.Stemcells, next.VMs = w.releases, w.stemcells, w.vms
	return next
}

// SHA256Hex is the hex SHA-256 of text.
func SHA256Hex(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

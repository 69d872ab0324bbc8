package versions

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// maxListed bounds the outdated instances a report lists (it counts them all).
const maxListed = 100

// Outdated lists the instances whose record holds an older version than
// their plan declares, or none: the oldest version first, then by id.
// Orphaned records (no deployment to upgrade), plans the catalog does not
// know and plans without maintenance_info are left out.
func Outdated(index map[string]*vault.Record, cat *catalog.Catalog) []report.Outdated {
	var out []report.Outdated
	for id, rec := range index {
		if rec == nil || rec.Orphaned || cat == nil {
			continue
		}
		_, plan, ok := cat.Plan(rec.PlanID)
		if !ok || plan.MaintenanceInfo == nil {
			continue
		}
		want := plan.MaintenanceInfo.Version
		if rec.MaintenanceVersion != "" && catalog.CompareVersions(rec.MaintenanceVersion, want) >= 0 {
			continue
		}
		out = append(out, report.Outdated{InstanceID: id, ServiceID: rec.ServiceID, PlanID: rec.PlanID,
			Deployment: rec.Deployment(id), Version: rec.MaintenanceVersion, Want: want, Adopted: rec.Adopted})
	}
	slices.SortFunc(out, func(a, b report.Outdated) int {
		return cmp.Or(catalog.CompareVersions(a.Version, b.Version), strings.Compare(a.InstanceID, b.InstanceID))
	})
	return out
}

// Summarize is a run's report of them: every one counted, by plan, the
// first maxListed listed.
func Summarize(list []report.Outdated) *report.OutdatedReport {
	r := &report.OutdatedReport{Count: len(list), ByPlan: map[string]int{}, Instances: list[:min(len(list), maxListed)]}
	for _, o := range list {
		r.ByPlan[o.PlanID]++
	}
	if r.Instances == nil {
		r.Instances = []report.Outdated{}
	}
	return r
}

// Doc is the state document of what the webhooks were told: the version
// each outdated instance's plan wanted when it was announced. Instances are
// kept under a short digest of their id (Key), grouped by version, so that
// the document of tens of thousands of instances stays within a state
// document's bounds (12 bytes an instance: 10,000 take 120 KB).
type Doc struct {
	// Announced maps an instance's Key to the version announced.
	Announced map[string]string
}

// DocName is the state document's name.
const DocName = "outdated"

// keyLength is the hex digits of an instance's Key: 48 bits, two of 10,000
// instances share one with odds of about 1 in 5 million (then the second
// is not announced).
const keyLength = 12

// Key is what the document keeps of instance id: the first hex digits of
// its id's SHA-256.
func Key(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])[:keyLength]
}

// docJSON is the document's encoding: by version, the keys sorted and
// written one after the other. Announced is the encoding of the documents
// written before (instance id to version), read only.
type docJSON struct {
	ByWant    map[string]string `json:"by_want,omitempty"`
	Announced map[string]string `json:"announced,omitempty"`
}

// MarshalJSON writes the document by version.
func (d Doc) MarshalJSON() ([]byte, error) {
	by := map[string][]string{}
	for k, v := range d.Announced {
		by[v] = append(by[v], k)
	}
	out := docJSON{ByWant: map[string]string{}}
	for v, keys := range by {
		slices.Sort(keys)
		out.ByWant[v] = strings.Join(keys, "")
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the document in either encoding; a key of the wrong
// shape is dropped (that instance is announced again).
func (d *Doc) UnmarshalJSON(data []byte) error {
	var in docJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	d.Announced = map[string]string{}
	for id, v := range in.Announced {
		d.Announced[Key(id)] = v
	}
	for v, keys := range in.ByWant {
		for i := 0; i+keyLength <= len(keys); i += keyLength {
			if k := keys[i : i+keyLength]; isHex(k) {
				d.Announced[k] = v
			}
		}
	}
	return nil
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// MaxAnnounced bounds the instances the document keeps (12 bytes each:
// 18,000 take 216 KB, within a state document's 256 KiB; 100,000 took
// 1.2 MB, so the write failed and every run announced them all again);
// MaxFreshPerRun those a run announces (a webhook's queue holds 1,000
// events: a fleet-wide version bump would push every other event out).
// The others are announced by the next runs.
const (
	MaxAnnounced   = 18000
	MaxFreshPerRun = 500
)

// Announce returns the instances of list to announce (not announced yet
// for the version their plan now wants; at most MaxFreshPerRun, and only
// while the document has room) and the document after: those announced,
// the others no longer outdated dropped.
func Announce(doc Doc, list []report.Outdated) (Doc, []report.Outdated) {
	next := Doc{Announced: map[string]string{}}
	var waiting []report.Outdated
	for _, o := range list {
		k := Key(o.InstanceID)
		if doc.Announced[k] == o.Want {
			next.Announced[k] = o.Want
		} else {
			waiting = append(waiting, o)
		}
	}
	var fresh []report.Outdated
	for _, o := range waiting {
		if len(fresh) >= MaxFreshPerRun || len(next.Announced) >= MaxAnnounced {
			break
		}
		next.Announced[Key(o.InstanceID)] = o.Want
		fresh = append(fresh, o)
	}
	return next, fresh
}

// Equal says whether two documents hold the same announcements.
func (d Doc) Equal(o Doc) bool { return maps.Equal(d.Announced, o.Announced) }

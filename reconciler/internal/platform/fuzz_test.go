package platform_test

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// fuzzOps are the platform's last operations a fuzzed instance may have.
var fuzzOps = [][2]string{{"create", "succeeded"}, {"create", "in progress"}, {"create", "failed"},
	{"update", "in progress"}, {"", ""}, {"delete", "failed"}, {"create", "initial"}}

// fuzzWorld is an index, a view and what the run knows, built from bytes:
// four bytes an instance (its id, where it is, its record's and its platform
// instance's traits), the ids few so that they meet.
type fuzzWorld struct {
	index   map[string]*vault.Record
	view    *platform.View
	listed  map[string]bool
	claimed map[string]bool
	prev    platform.Doc
	in      platform.Input
}

func buildFuzzWorld(data []byte, limit uint8, graceS uint16, startS int16) *fuzzWorld {
	w := &fuzzWorld{
		index:   map[string]*vault.Record{},
		view:    &platform.View{ReadAt: readAt, Instances: map[string]platform.Instance{}, Plans: 2, Requests: 3, PlanIDs: map[string]bool{"small": true, "large": true}},
		listed:  map[string]bool{},
		claimed: map[string]bool{},
		prev:    platform.Doc{Absent: map[string]platform.Entry{}},
	}
	start := readAt.Add(time.Duration(startS) * time.Second)
	grace := time.Duration(graceS) * time.Second
	plans := []string{"small", "large", ""}
	for len(data) >= 4 {
		c := data[:4]
		data = data[4:]
		id := fmt.Sprintf("i%02d", c[0]%16)
		flags := c[1]
		plan := plans[int(c[3])%len(plans)]
		if flags&1 != 0 {
			rec := &vault.Record{ServiceID: "redis", PlanID: plan, Orphaned: flags&4 != 0}
			if flags&16 != 0 {
				rec.Director = "away"
			}
			if flags&64 != 0 {
				rec.DeploymentName = "dep-" + id
			}
			if flags&128 != 0 {
				rec.LastOperation = &vault.Operation{Type: "provision", State: vault.OperationInProgress}
			} else if c[3]&8 != 0 {
				rec.LastOperation = &vault.Operation{Type: "update", State: vault.OperationSucceeded}
			}
			switch c[2] % 6 {
			case 0:
				rec.Created = 0
			case 1:
				rec.Created = readAt.Add(-48 * time.Hour).Unix()
			case 2:
				rec.Created = start.Add(-grace / 2).Unix()
			case 3:
				rec.Created = readAt.Unix()
			case 4:
				rec.Created = readAt.Add(time.Duration(c[3]) * time.Minute).Unix()
			case 5:
				rec.Created = start.Add(-grace).Unix()
			}
			w.index[id] = rec
			if flags&8 != 0 {
				w.listed[rec.Deployment(id)] = true
			}
		}
		if flags&2 != 0 {
			op := fuzzOps[int(c[2]>>3)%len(fuzzOps)]
			w.view.Instances[id] = platform.Instance{Name: "svc-" + id, PlanID: plan, OpType: op[0], OpState: op[1]}
			if c[3]&4 != 0 {
				w.listed[vault.DeploymentName(plan, id)] = true
			}
		}
		if flags&32 != 0 {
			w.claimed[id] = true
		}
		if c[3]&16 != 0 {
			w.prev.Absent[id] = platform.Entry{Since: readAt.Add(-time.Duration(c[2]) * time.Hour).Unix(), Reads: int(c[3] >> 5)}
		}
	}
	w.in = platform.Input{
		Index:    w.index,
		Listed:   func(name string) bool { return w.listed[name] },
		OutOfRun: func(rec *vault.Record) bool { return rec.Director == "away" },
		Claimed:  func(id string) bool { return w.claimed[id] },
		Start:    start,
		Grace:    grace,
		Limit:    int(limit % 8),
	}
	return w
}

// expected is an instance's state as the package's rules say, "" when it
// is not judged; written from the rules, not from judge.
func (w *fuzzWorld) expected(id string) string {
	rec, inIndex := w.index[id]
	pin, onPlatform := w.view.Instances[id]
	if !inIndex {
		if pin.OpType == "create" && pin.OpState != "succeeded" {
			return report.Creating
		}
		return report.PlatformOnly
	}
	if rec.Director == "away" {
		return ""
	}
	deployed := w.listed[rec.Deployment(id)]
	switch {
	case onPlatform && deployed:
		return report.InStep
	case onPlatform && rec.Orphaned:
		return report.OrphanOnPlatform
	case onPlatform:
		return ""
	case !deployed && rec.Orphaned:
		return report.Absent
	case !deployed:
		return ""
	}
	if rec.LastOperation != nil && rec.LastOperation.State == vault.OperationInProgress {
		return ""
	}
	if rec.Created != 0 {
		created := time.Unix(rec.Created, 0)
		if w.in.Start.Sub(created) < w.in.Grace || !created.Before(w.view.ReadAt) {
			return ""
		}
	}
	return report.OrphanDeployment
}

func checkSortedUnique(t *testing.T, what string, list []string) {
	t.Helper()
	for i := 1; i < len(list); i++ {
		if list[i-1] >= list[i] {
			t.Fatalf("%s not sorted or repeated: %q", what, list)
		}
	}
}

// FuzzClassify: whatever the index, the view and the run's knowledge,
// Classify does not panic and accounts for every instance once: each index
// record judged or unchecked, each platform instance Vault lacks judged
// platform-only or creating, the counts whole and the lists bounded, sorted
// and true to the states; and Next carries on exactly the proofs it should.
func FuzzClassify(f *testing.F) {
	f.Add([]byte{0, 1 | 2 | 8, 1, 0}, uint8(0), uint16(3600), int16(0))
	f.Add([]byte{1, 1 | 8, 1, 0, 2, 1 | 2 | 4, 1, 0, 3, 1 | 4, 1, 0, 4, 2, 0, 4, 5, 2, 8, 0, 6, 1, 0, 0}, uint8(1), uint16(60), int16(-30))
	f.Add([]byte{7, 1 | 8 | 16, 1, 16, 8, 1 | 8 | 128, 0, 16, 9, 1 | 8, 3, 17, 10, 1 | 8 | 64, 5, 48, 11, 2 | 32, 16, 4}, uint8(2), uint16(7200), int16(7200))
	f.Fuzz(func(t *testing.T, data []byte, limit uint8, graceS uint16, startS int16) {
		w := buildFuzzWorld(data, limit, graceS, startS)
		j := platform.Classify(w.view, w.in)

		extra := 0
		for guid := range w.view.Instances {
			if _, ok := w.index[guid]; !ok {
				extra++
			}
		}
		unchecked := map[string]int{}
		for _, id := range j.Unchecked {
			unchecked[id]++
			if _, ok := w.index[id]; !ok {
				t.Fatalf("unchecked %q is no index record", id)
			}
		}
		for id := range w.index {
			_, judged := j.States[id]
			if judged == (unchecked[id] == 1) || unchecked[id] > 1 {
				t.Fatalf("record %q: judged %v, unchecked %d times", id, judged, unchecked[id])
			}
		}
		for guid := range w.view.Instances {
			if _, ok := w.index[guid]; ok {
				continue
			}
			if s := j.States[guid]; s != report.PlatformOnly && s != report.Creating {
				t.Fatalf("platform instance %q Vault lacks judged %q", guid, s)
			}
		}
		for id, s := range j.States {
			_, inIndex := w.index[id]
			_, onPlatform := w.view.Instances[id]
			if !inIndex && !onPlatform {
				t.Fatalf("%q judged %q, neither in the index nor on the platform", id, s)
			}
			if !slices.Contains(platform.States, s) {
				t.Fatalf("%q judged %q, no state of States", id, s)
			}
		}
		for _, id := range slicesOfKeys(w.index, w.view.Instances) {
			got, ok := j.States[id]
			if !ok {
				got = ""
			}
			if want := w.expected(id); got != want {
				t.Fatalf("%q: state %q, the rules say %q (record %+v, platform %+v)", id, got, want, w.index[id], w.view.Instances[id])
			}
		}
		if len(j.States)+len(j.Unchecked) != len(w.index)+extra {
			t.Fatalf("%d judged + %d unchecked != %d records + %d platform-only", len(j.States), len(j.Unchecked), len(w.index), extra)
		}

		counted := 0
		if len(j.Report.Counts) != len(platform.States) {
			t.Fatalf("counts %v: not every state", j.Report.Counts)
		}
		for _, s := range platform.States {
			n, ok := j.Report.Counts[s]
			if !ok {
				t.Fatalf("no count of %q", s)
			}
			want := 0
			for _, got := range j.States {
				if got == s {
					want++
				}
			}
			if n != want {
				t.Fatalf("count of %q: %d, %d judged so", s, n, want)
			}
			counted += n
		}
		if counted+len(j.Unchecked) != len(w.index)+extra {
			t.Fatalf("counts %d + unchecked %d != %d records + %d platform-only", counted, len(j.Unchecked), len(w.index), extra)
		}
		if j.Report.Unchecked != len(j.Unchecked) || j.Report.Instances != len(w.view.Instances) ||
			j.Report.State != report.PlatformKnown || !j.Report.ReadAt.Equal(readAt) {
			t.Fatalf("report %+v", j.Report)
		}

		checkSortedUnique(t, "unchecked", j.Unchecked)
		checkSortedUnique(t, "orphan deployments", j.OrphanDeployments)
		var wantOrphans []string
		for id, s := range j.States {
			if s == report.OrphanDeployment {
				wantOrphans = append(wantOrphans, id)
			}
		}
		slices.Sort(wantOrphans)
		if !slices.Equal(wantOrphans, j.OrphanDeployments) {
			t.Fatalf("orphan deployments %q, judged %q", j.OrphanDeployments, wantOrphans)
		}

		bound := cmp.Or(w.in.Limit, report.MaxPlatformListed)
		if j.Report.OrphanDeployments == nil || j.Report.PlatformOnly == nil {
			t.Fatal("a list is nil")
		}
		if len(j.Report.OrphanDeployments) != min(j.Report.Counts[report.OrphanDeployment], bound) {
			t.Fatalf("%d orphan deployments listed of %d, limit %d", len(j.Report.OrphanDeployments), j.Report.Counts[report.OrphanDeployment], bound)
		}
		if len(j.Report.PlatformOnly) != min(j.Report.Counts[report.PlatformOnly], bound) {
			t.Fatalf("%d platform-only listed of %d, limit %d", len(j.Report.PlatformOnly), j.Report.Counts[report.PlatformOnly], bound)
		}
		listedIDs := func(list []report.PlatformInstance) []string {
			out := make([]string, len(list))
			for i, p := range list {
				out[i] = p.InstanceID
			}
			return out
		}
		checkSortedUnique(t, "listed orphan deployments", listedIDs(j.Report.OrphanDeployments))
		checkSortedUnique(t, "listed platform-only", listedIDs(j.Report.PlatformOnly))
		if !slices.Equal(listedIDs(j.Report.OrphanDeployments), j.OrphanDeployments[:len(j.Report.OrphanDeployments)]) {
			t.Fatalf("listed orphan deployments are not the first: %q of %q", listedIDs(j.Report.OrphanDeployments), j.OrphanDeployments)
		}
		for _, p := range j.Report.OrphanDeployments {
			rec := w.index[p.InstanceID]
			if p.State != report.OrphanDeployment || p.Deployment != rec.Deployment(p.InstanceID) || p.PlanID != rec.PlanID ||
				p.Director != rec.Director || p.Platform != nil || p.Restorable != "" {
				t.Fatalf("orphan deployment listed as %+v, record %+v", p, rec)
			}
		}
		for _, p := range j.Report.PlatformOnly {
			pin := w.view.Instances[p.InstanceID]
			restorable := ""
			if w.claimed[p.InstanceID] || w.listed[vault.DeploymentName(pin.PlanID, p.InstanceID)] {
				restorable = "deployment"
			}
			if p.State != report.PlatformOnly || j.States[p.InstanceID] != report.PlatformOnly || p.PlanID != pin.PlanID ||
				p.Platform == nil || p.Platform.Name != pin.Name || p.Restorable != restorable {
				t.Fatalf("platform-only listed as %+v, platform %+v", p, pin)
			}
		}

		next, fresh := platform.Next(w.prev, j.OrphanDeployments, j.Unchecked, readAt, 0)
		for id, e := range next.Absent {
			old, had := w.prev.Absent[id]
			switch {
			case j.States[id] == report.OrphanDeployment && had:
				if e != (platform.Entry{Since: old.Since, Reads: old.Reads + 1}) {
					t.Fatalf("proof of %q carried as %+v from %+v", id, e, old)
				}
			case j.States[id] == report.OrphanDeployment:
				if e != (platform.Entry{Since: readAt.Unix(), Reads: 1}) || !slices.Contains(fresh, id) {
					t.Fatalf("proof of new %q started as %+v", id, e)
				}
			case unchecked[id] == 1:
				if !had || e != old {
					t.Fatalf("proof of unchecked %q: %+v, was %+v (%v)", id, e, old, had)
				}
			default:
				t.Fatalf("proof of %q (%q) carried on", id, j.States[id])
			}
		}
		for _, id := range j.OrphanDeployments {
			if _, ok := next.Absent[id]; !ok {
				t.Fatalf("orphan deployment %q has no proof", id)
			}
		}
		for _, id := range fresh {
			if _, had := w.prev.Absent[id]; had {
				t.Fatalf("%q fresh but had a proof", id)
			}
		}
	})
}

// slicesOfKeys are the ids of the index and of the view, once each.
func slicesOfKeys(index map[string]*vault.Record, view map[string]platform.Instance) []string {
	var out []string
	for id := range index {
		out = append(out, id)
	}
	for id := range view {
		if _, ok := index[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

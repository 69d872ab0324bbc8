package platform_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// readAt is when the views of these specs were read.
var readAt = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// old is a record's creation long before readAt and any grace period.
var old = readAt.Add(-48 * time.Hour).Unix()

// world is what a run knows (index, Directors' listing, claims) and the
// platform's view, for Classify.
type world struct {
	index   map[string]*vault.Record
	view    *platform.View
	listed  map[string]bool
	away    map[string]bool // Directors out of the run
	claimed map[string]bool
	start   time.Time
	grace   time.Duration
	limit   int
}

func newWorld() *world {
	return &world{
		index:   map[string]*vault.Record{},
		view:    &platform.View{ReadAt: readAt, Instances: map[string]platform.Instance{}, Plans: 1, PlanIDs: map[string]bool{"small": true}},
		listed:  map[string]bool{},
		away:    map[string]bool{},
		claimed: map[string]bool{},
		start:   readAt,
		grace:   time.Hour,
	}
}

// record is an old record of plan small, no operation, not orphaned.
func record() *vault.Record {
	return &vault.Record{ServiceID: "redis", PlanID: "small", Created: old}
}

// has puts rec in the index under id.
func (w *world) has(id string, rec *vault.Record) *vault.Record {
	w.index[id] = rec
	return rec
}

// runs lists the deployment of the index record id (a Director runs it).
func (w *world) runs(id string) { w.listed[w.index[id].Deployment(id)] = true }

// platformHas puts an instance in the view, its create succeeded.
func (w *world) platformHas(guid string) {
	w.view.Instances[guid] = platform.Instance{Name: "svc-" + guid, PlanID: "small", OpType: "create", OpState: "succeeded"}
}

func (w *world) input() platform.Input {
	return platform.Input{
		Index:    w.index,
		Listed:   func(name string) bool { return w.listed[name] },
		OutOfRun: func(rec *vault.Record) bool { return w.away[rec.Director] },
		Claimed:  func(id string) bool { return w.claimed[id] },
		Start:    w.start,
		Grace:    w.grace,
		Limit:    w.limit,
	}
}

func (w *world) classify() platform.Judged { return platform.Classify(w.view, w.input()) }

// stateOf is id's state, "unchecked" when it was not judged, "" when
// Classify forgot it.
func stateOf(j platform.Judged, id string) string {
	if s, ok := j.States[id]; ok {
		Expect(j.Unchecked).NotTo(ContainElement(id), "%s judged and unchecked", id)
		return s
	}
	if slices.Contains(j.Unchecked, id) {
		return "unchecked"
	}
	return ""
}

func ids(list []report.PlatformInstance) []string {
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = p.InstanceID
	}
	return out
}

// countsOf are the report's counts expected: every state, zeros included.
func countsOf(nonzero map[string]int) map[string]int {
	out := map[string]int{}
	for _, s := range platform.States {
		out[s] = 0
	}
	maps.Copy(out, nonzero)
	return out
}

var _ = Describe("Classify", func() {
	var w *world
	BeforeEach(func() { w = newWorld() })

	Describe("in_step", func() {
		It("is an instance the platform, Vault and a Director all have", func() {
			w.has("a", record())
			w.runs("a")
			w.platformHas("a")
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"a": report.InStep}))
			Expect(j.Unchecked).To(BeEmpty())
			Expect(j.OrphanDeployments).To(BeEmpty())
			Expect(j.Report.Counts).To(Equal(countsOf(map[string]int{report.InStep: 1})))
			Expect(j.Report.OrphanDeployments).To(BeEmpty())
			Expect(j.Report.PlatformOnly).To(BeEmpty())
		})

		It("matches by the record's deployment_name when it has one", func() {
			rec := w.has("a", record())
			rec.DeploymentName = "legacy-redis-a"
			w.listed["legacy-redis-a"] = true
			w.platformHas("a")
			Expect(stateOf(w.classify(), "a")).To(Equal(report.InStep))

			w.listed = map[string]bool{"small-a": true} // the plan's name is not its deployment
			Expect(stateOf(w.classify(), "a")).To(Equal("unchecked"))
		})

		It("takes no heed of the grace period, the view's age, an operation in progress or an orphan flag", func() {
			young := w.has("young", record())
			young.Created = w.start.Add(-time.Minute).Unix()
			late := w.has("late", record())
			late.Created = readAt.Add(time.Minute).Unix()
			busy := w.has("busy", record())
			busy.LastOperation = &vault.Operation{Type: "update", State: vault.OperationInProgress}
			flagged := w.has("flagged", record())
			flagged.Orphaned = true
			for id := range w.index {
				w.runs(id)
				w.platformHas(id)
			}
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"young": report.InStep, "late": report.InStep,
				"busy": report.InStep, "flagged": report.InStep}))
			Expect(j.Unchecked).To(BeEmpty())
		})

		It("is an instance in Vault and deployed even when the platform shows a create in progress", func() {
			w.has("a", record())
			w.runs("a")
			w.view.Instances["a"] = platform.Instance{PlanID: "small", OpType: "create", OpState: "in progress"}
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"a": report.InStep}))
			Expect(j.Report.Counts[report.Creating]).To(BeZero())
		})
	})

	Describe("orphan_deployment", func() {
		It("is an old record whose deployment runs and that the platform does not have", func() {
			rec := w.has("a", record())
			rec.Director = "east"
			w.runs("a")
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"a": report.OrphanDeployment}))
			Expect(j.OrphanDeployments).To(Equal([]string{"a"}))
			Expect(j.Report.Counts).To(Equal(countsOf(map[string]int{report.OrphanDeployment: 1})))
			Expect(j.Report.OrphanDeployments).To(Equal([]report.PlatformInstance{{InstanceID: "a",
				State: report.OrphanDeployment, Deployment: "small-a", PlanID: "small", Director: "east"}}))
			Expect(j.Report.PlatformOnly).To(BeEmpty())
		})

		It("is not the platform's to judge when another platform made it, or its plan is none the platform lists", func() {
			k8s := w.has("k8s", record())
			k8s.Context = map[string]string{"platform": "kubernetes", "namespace": "prod-db"}
			w.runs("k8s")
			unlisted := w.has("unlisted", record())
			unlisted.PlanID = "large" // the platform lists the broker's plan small only
			w.runs("unlisted")
			cf := w.has("cf", record())
			cf.Context = map[string]string{"platform": "cloudfoundry"}
			w.runs("cf")
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"k8s": report.NotPlatforms, "unlisted": report.NotPlatforms,
				"cf": report.OrphanDeployment}))
			Expect(j.OrphanDeployments).To(Equal([]string{"cf"}), "only the platform's own is ever retired")
			Expect(j.Report.Counts[report.NotPlatforms]).To(Equal(2))
		})

		It("reports the record's deployment_name as its deployment", func() {
			rec := w.has("a", record())
			rec.DeploymentName = "legacy-redis-a"
			w.runs("a")
			j := w.classify()
			Expect(j.Report.OrphanDeployments).To(ConsistOf(HaveField("Deployment", "legacy-redis-a")))
		})

		It("is a record flagged orphaned too, when its deployment runs", func() {
			rec := w.has("a", record())
			rec.Orphaned = true
			w.runs("a")
			Expect(stateOf(w.classify(), "a")).To(Equal(report.OrphanDeployment))
		})

		It("counts a record with no creation time (Created 0) as old", func() {
			rec := w.has("a", record())
			rec.Created = 0
			w.runs("a")
			w.grace = 1000 * time.Hour
			Expect(stateOf(w.classify(), "a")).To(Equal(report.OrphanDeployment))
		})

		It("judges a record whose last operation ended, succeeded or failed", func() {
			for _, state := range []string{vault.OperationSucceeded, vault.OperationFailed} {
				rec := w.has("a-"+state, record())
				rec.LastOperation = &vault.Operation{Type: "provision", State: state}
				w.runs("a-" + state)
			}
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"a-succeeded": report.OrphanDeployment,
				"a-failed": report.OrphanDeployment}))
		})

		It("judges a record exactly as old as the grace period, and one created a second before the read", func() {
			edge := w.has("edge", record())
			edge.Created = w.start.Add(-w.grace).Unix()
			w.runs("edge")
			Expect(stateOf(w.classify(), "edge")).To(Equal(report.OrphanDeployment))

			w = newWorld()
			w.start = readAt.Add(2 * time.Hour) // a view an earlier run read
			before := w.has("before", record())
			before.Created = readAt.Add(-time.Second).Unix()
			w.runs("before")
			Expect(stateOf(w.classify(), "before")).To(Equal(report.OrphanDeployment))
		})
	})

	Describe("platform_only", func() {
		It("is an instance the platform has and Vault does not, shown as the platform has it", func() {
			updated := readAt.Add(-time.Hour)
			w.view.Instances["p"] = platform.Instance{Name: "my-redis", Space: "dev", SpaceGUID: "space-1", Org: "acme",
				PlanID: "small", OpType: "create", OpState: "succeeded", UpdatedAt: updated}
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"p": report.PlatformOnly}))
			Expect(j.Unchecked).To(BeEmpty())
			Expect(j.OrphanDeployments).To(BeEmpty())
			Expect(j.Report.Counts).To(Equal(countsOf(map[string]int{report.PlatformOnly: 1})))
			Expect(j.Report.PlatformOnly).To(Equal([]report.PlatformInstance{{InstanceID: "p", State: report.PlatformOnly,
				PlanID: "small", Platform: &report.PlatformRecord{Name: "my-redis", Space: "dev", SpaceGUID: "space-1",
					Organization: "acme", PlanID: "small", Operation: "create succeeded", UpdatedAt: updated}}}))
		})

		It("is restorable from a deployment the run claimed for it", func() {
			w.platformHas("p")
			w.claimed["p"] = true
			Expect(w.classify().Report.PlatformOnly).To(ConsistOf(HaveField("Restorable", "deployment")))
		})

		It("is restorable from a listed deployment named {planID}-{guid}, by the platform's plan", func() {
			w.view.Instances["p"] = platform.Instance{PlanID: "large"}
			w.listed["small-p"] = true
			Expect(w.classify().Report.PlatformOnly).To(ConsistOf(HaveField("Restorable", "")), "not its plan")
			w.listed["large-p"] = true
			Expect(w.classify().Report.PlatformOnly).To(ConsistOf(HaveField("Restorable", "deployment")))
		})

		It("leaves Restorable to Fill when neither claimed nor deployed", func() {
			w.platformHas("p")
			Expect(w.classify().Report.PlatformOnly).To(ConsistOf(HaveField("Restorable", "")))
		})

		It("is an instance with no last operation, or an update or a delete under way", func() {
			w.view.Instances["none"] = platform.Instance{PlanID: "small"}
			w.view.Instances["update"] = platform.Instance{PlanID: "small", OpType: "update", OpState: "in progress"}
			w.view.Instances["delete"] = platform.Instance{PlanID: "small", OpType: "delete", OpState: "failed"}
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"none": report.PlatformOnly, "update": report.PlatformOnly,
				"delete": report.PlatformOnly}))
			Expect(ids(j.Report.PlatformOnly)).To(Equal([]string{"delete", "none", "update"}))
			Expect(j.Report.PlatformOnly[1].Platform.Operation).To(BeEmpty(), "no last operation")
			Expect(j.Report.PlatformOnly[2].Platform.Operation).To(Equal("update in progress"))
		})
	})

	Describe("orphan", func() {
		It("is a record flagged orphaned that the platform still has, its deployment gone", func() {
			rec := w.has("o", record())
			rec.Orphaned = true
			w.platformHas("o")
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"o": report.OrphanOnPlatform}))
			Expect(j.Report.Counts).To(Equal(countsOf(map[string]int{report.OrphanOnPlatform: 1})))
			Expect(j.OrphanDeployments).To(BeEmpty())
			Expect(j.Report.OrphanDeployments).To(BeEmpty())
			Expect(j.Report.PlatformOnly).To(BeEmpty())
		})

		It("takes no heed of the grace period or an operation in progress", func() {
			rec := w.has("o", record())
			rec.Orphaned = true
			rec.Created = w.start.Unix()
			rec.LastOperation = &vault.Operation{Type: "deprovision", State: vault.OperationInProgress}
			w.platformHas("o")
			Expect(stateOf(w.classify(), "o")).To(Equal(report.OrphanOnPlatform))
		})
	})

	Describe("absent", func() {
		It("is a record flagged orphaned that neither the platform nor a Director has", func() {
			rec := w.has("x", record())
			rec.Orphaned = true
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"x": report.Absent}))
			Expect(j.Report.Counts).To(Equal(countsOf(map[string]int{report.Absent: 1})))
			Expect(j.Report.OrphanDeployments).To(BeEmpty())
			Expect(j.Report.PlatformOnly).To(BeEmpty())
		})

		It("takes no heed of the grace period or an operation in progress", func() {
			rec := w.has("x", record())
			rec.Orphaned = true
			rec.Created = readAt.Add(time.Hour).Unix()
			rec.LastOperation = &vault.Operation{Type: "deprovision", State: vault.OperationInProgress}
			Expect(stateOf(w.classify(), "x")).To(Equal(report.Absent))
		})
	})

	Describe("creating", func() {
		DescribeTable("is an instance the platform is creating or failed to, that Vault does not have",
			func(opState string) {
				w.view.Instances["c"] = platform.Instance{PlanID: "small", OpType: "create", OpState: opState}
				w.claimed["c"] = true
				w.listed["small-c"] = true
				j := w.classify()
				Expect(j.States).To(Equal(map[string]string{"c": report.Creating}))
				Expect(j.Report.Counts).To(Equal(countsOf(map[string]int{report.Creating: 1})))
				Expect(j.Report.PlatformOnly).To(BeEmpty(), "a creating instance is not listed")
				Expect(j.Report.OrphanDeployments).To(BeEmpty())
				Expect(j.Unchecked).To(BeEmpty())
			},
			Entry("in progress", "in progress"),
			Entry("failed", "failed"),
			Entry("initial", "initial"),
			Entry("with no state", ""),
		)

		It("is not an instance whose create succeeded, or whose update is in progress", func() {
			w.view.Instances["done"] = platform.Instance{PlanID: "small", OpType: "create", OpState: "succeeded"}
			w.view.Instances["upd"] = platform.Instance{PlanID: "small", OpType: "update", OpState: "in progress"}
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"done": report.PlatformOnly, "upd": report.PlatformOnly}))
			Expect(j.Report.Counts[report.Creating]).To(BeZero())
		})
	})

	Describe("unchecked records", func() {
		It("are the records whose Director is out of the run, whatever else holds", func() {
			w.away["west"] = true
			for _, id := range []string{"would-be-in-step", "would-be-orphan-dep", "would-be-orphan", "would-be-absent"} {
				rec := w.has(id, record())
				rec.Director = "west"
			}
			w.runs("would-be-in-step")
			w.platformHas("would-be-in-step")
			w.runs("would-be-orphan-dep")
			w.index["would-be-orphan"].Orphaned = true
			w.platformHas("would-be-orphan")
			w.index["would-be-absent"].Orphaned = true
			var asked []*vault.Record
			in := w.input()
			in.OutOfRun = func(rec *vault.Record) bool {
				asked = append(asked, rec)
				return w.away[rec.Director]
			}
			j := platform.Classify(w.view, in)
			Expect(j.States).To(BeEmpty())
			Expect(j.Unchecked).To(Equal([]string{"would-be-absent", "would-be-in-step", "would-be-orphan", "would-be-orphan-dep"}))
			Expect(j.Report.Unchecked).To(Equal(4))
			Expect(j.Report.Counts).To(Equal(countsOf(nil)))
			Expect(asked).To(ConsistOf(w.index["would-be-in-step"], w.index["would-be-orphan-dep"],
				w.index["would-be-orphan"], w.index["would-be-absent"]), "asked with each record")
		})

		It("are records younger than the grace period", func() {
			rec := w.has("young", record())
			rec.Created = w.start.Add(-w.grace + time.Second).Unix()
			w.runs("young")
			j := w.classify()
			Expect(j.States).To(BeEmpty())
			Expect(j.Unchecked).To(Equal([]string{"young"}))
			Expect(j.OrphanDeployments).To(BeEmpty())
		})

		It("are records created at or after the view was read, however old", func() {
			w.start = readAt.Add(2 * time.Hour) // a view an earlier run read
			at := w.has("at", record())
			at.Created = readAt.Unix()
			after := w.has("after", record())
			after.Created = readAt.Add(30 * time.Minute).Unix()
			w.runs("at")
			w.runs("after")
			j := w.classify()
			Expect(j.States).To(BeEmpty())
			Expect(j.Unchecked).To(Equal([]string{"after", "at"}))
		})

		It("are records with an operation in progress, even with no creation time", func() {
			rec := w.has("busy", record())
			rec.Created = 0
			rec.LastOperation = &vault.Operation{Type: "deprovision", State: vault.OperationInProgress}
			w.runs("busy")
			j := w.classify()
			Expect(j.Unchecked).To(Equal([]string{"busy"}))
			Expect(j.States).To(BeEmpty())
		})

		It("are records neither listed nor flagged orphaned, the platform having them or not", func() {
			w.has("on-platform", record())
			w.platformHas("on-platform")
			w.has("nowhere", record())
			j := w.classify()
			Expect(j.States).To(BeEmpty(), "the orphaner decides first")
			Expect(j.Unchecked).To(Equal([]string{"nowhere", "on-platform"}))
			Expect(j.Report.Unchecked).To(Equal(2))
			Expect(j.Report.Instances).To(Equal(1))
			Expect(j.Report.PlatformOnly).To(BeEmpty(), "a guid in the index is never platform-only")
		})
	})

	Describe("the report", func() {
		It("counts every state, zeros included, and no other, for an empty fleet and platform", func() {
			j := w.classify()
			Expect(j.States).To(BeEmpty())
			Expect(j.Unchecked).To(BeEmpty())
			Expect(j.OrphanDeployments).To(BeEmpty())
			Expect(j.Report.Counts).To(HaveLen(len(platform.States)))
			Expect(j.Report.Counts).To(Equal(countsOf(nil)))
			Expect(j.Report.OrphanDeployments).NotTo(BeNil(), "a JSON [] not null")
			Expect(j.Report.PlatformOnly).NotTo(BeNil(), "a JSON [] not null")
			Expect(j.Report.OrphanDeployments).To(BeEmpty())
			Expect(j.Report.PlatformOnly).To(BeEmpty())
		})

		It("lists the seven states of the gauges", func() {
			Expect(platform.States).To(ConsistOf(report.InStep, report.OrphanDeployment, report.PlatformOnly,
				report.OrphanOnPlatform, report.Creating, report.Absent, report.NotPlatforms))
		})

		It("shows the view: when read, its requests, duration, plans and instances; known, not fresh", func() {
			w.view.Requests, w.view.Took, w.view.Plans = 7, 1500*time.Millisecond, 3
			w.platformHas("p")
			w.platformHas("q")
			j := w.classify()
			Expect(j.Report.State).To(Equal(report.PlatformKnown))
			Expect(j.Report.ReadAt).To(Equal(readAt))
			Expect(j.Report.Requests).To(Equal(7))
			Expect(j.Report.Seconds).To(Equal(1.5))
			Expect(j.Report.Plans).To(Equal(3))
			Expect(j.Report.Instances).To(Equal(2))
			Expect(j.Report.Fresh).To(BeFalse(), "the caller says whether it read the view")
			Expect(j.Report.Reason).To(BeEmpty())
		})

		It("holds every state at once, counted whole", func() {
			w.has("in", record())
			w.runs("in")
			w.platformHas("in")
			w.has("od", record())
			w.runs("od")
			w.has("or", record()).Orphaned = true
			w.platformHas("or")
			w.has("ab", record()).Orphaned = true
			w.platformHas("po")
			w.view.Instances["cr"] = platform.Instance{OpType: "create", OpState: "in progress"}
			w.has("un", record())
			j := w.classify()
			Expect(j.States).To(Equal(map[string]string{"in": report.InStep, "od": report.OrphanDeployment,
				"or": report.OrphanOnPlatform, "ab": report.Absent, "po": report.PlatformOnly, "cr": report.Creating}))
			Expect(j.Unchecked).To(Equal([]string{"un"}))
			Expect(j.Report.Counts).To(Equal(countsOf(map[string]int{report.InStep: 1, report.OrphanDeployment: 1,
				report.OrphanOnPlatform: 1, report.Absent: 1, report.PlatformOnly: 1, report.Creating: 1})))
			Expect(j.Report.Unchecked).To(Equal(1))
			Expect(j.Report.Instances).To(Equal(4))
		})

		It("sorts the lists, the orphan deployments' ids and the unchecked by instance id", func() {
			var want []string
			for i := range 40 {
				id := fmt.Sprintf("id-%02d", (i*17)%40) // not in order
				want = append(want, id)
				w.has("od-"+id, record())
				w.runs("od-" + id)
				w.platformHas("po-" + id)
				w.has("un-"+id, record())
			}
			slices.Sort(want)
			prefixed := func(p string) []string {
				out := make([]string, len(want))
				for i, id := range want {
					out[i] = p + id
				}
				return out
			}
			j := w.classify()
			Expect(j.OrphanDeployments).To(Equal(prefixed("od-")))
			Expect(j.Unchecked).To(Equal(prefixed("un-")))
			Expect(ids(j.Report.OrphanDeployments)).To(Equal(prefixed("od-")))
			Expect(ids(j.Report.PlatformOnly)).To(Equal(prefixed("po-")))
		})

		It("bounds the lists by Limit, the first by id, and keeps the counts and the ids whole", func() {
			for _, id := range []string{"e", "c", "a", "d", "b"} {
				w.has("od-"+id, record())
				w.runs("od-" + id)
				w.platformHas("po-" + id)
			}
			w.limit = 2
			j := w.classify()
			Expect(ids(j.Report.OrphanDeployments)).To(Equal([]string{"od-a", "od-b"}))
			Expect(ids(j.Report.PlatformOnly)).To(Equal([]string{"po-a", "po-b"}))
			Expect(j.Report.Counts[report.OrphanDeployment]).To(Equal(5))
			Expect(j.Report.Counts[report.PlatformOnly]).To(Equal(5))
			Expect(j.OrphanDeployments).To(Equal([]string{"od-a", "od-b", "od-c", "od-d", "od-e"}))
			Expect(j.States).To(HaveLen(10))

			w.limit = 100
			j = w.classify()
			Expect(j.Report.OrphanDeployments).To(HaveLen(5))
			Expect(j.Report.PlatformOnly).To(HaveLen(5))
		})

		It("bounds the lists by report.MaxPlatformListed when Limit is 0", func() {
			n := report.MaxPlatformListed + 20
			for i := range n {
				id := fmt.Sprintf("%04d", i)
				w.has("od-"+id, record())
				w.runs("od-" + id)
				w.platformHas("po-" + id)
			}
			j := w.classify()
			Expect(j.Report.OrphanDeployments).To(HaveLen(report.MaxPlatformListed))
			Expect(j.Report.PlatformOnly).To(HaveLen(report.MaxPlatformListed))
			Expect(j.Report.OrphanDeployments[report.MaxPlatformListed-1].InstanceID).To(Equal(
				fmt.Sprintf("od-%04d", report.MaxPlatformListed-1)))
			Expect(j.Report.Counts[report.OrphanDeployment]).To(Equal(n))
			Expect(j.Report.Counts[report.PlatformOnly]).To(Equal(n))
			Expect(j.OrphanDeployments).To(HaveLen(n))
		})
	})
})

var _ = Describe("Instance", func() {
	DescribeTable("Creating is a create not succeeded",
		func(opType, opState string, creating bool) {
			Expect(platform.Instance{OpType: opType, OpState: opState}.Creating()).To(Equal(creating))
		},
		Entry("create in progress", "create", "in progress", true),
		Entry("create failed", "create", "failed", true),
		Entry("create initial", "create", "initial", true),
		Entry("create succeeded", "create", "succeeded", false),
		Entry("update in progress", "update", "in progress", false),
		Entry("delete in progress", "delete", "in progress", false),
		Entry("no operation", "", "", false),
	)

	It("shows as the platform's record, its operation type and state", func() {
		at := readAt.Add(-time.Minute)
		in := platform.Instance{Name: "n", Space: "s", SpaceGUID: "sg", Org: "o", PlanID: "small", OpType: "update",
			OpState: "failed", UpdatedAt: at}
		Expect(in.Record()).To(Equal(&report.PlatformRecord{Name: "n", Space: "s", SpaceGUID: "sg", Organization: "o",
			PlanID: "small", Operation: "update failed", UpdatedAt: at}))
		Expect(platform.Instance{Name: "n"}.Record().Operation).To(BeEmpty())
	})

	It("cuts the names the platform's users chose to MaxNameShown", func() {
		long := strings.Repeat("x", 1000)
		rec := platform.Instance{Name: long, Space: long, Org: long}.Record()
		for _, name := range []string{rec.Name, rec.Space, rec.Organization} {
			Expect(len(name)).To(BeNumerically("<=", platform.MaxNameShown+3), "cut, an ellipsis at most added")
			Expect(len(name)).To(BeNumerically(">=", platform.MaxNameShown/2))
		}
	})
})

var _ = Describe("Unknown", func() {
	It("is the report of a platform not read whole: no state judged, this run's read, the last view's time", func() {
		last := &platform.View{ReadAt: readAt, Requests: 9, Plans: 2}
		rep := platform.Unknown("cloud controller: 503", 4, 2*time.Second, last)
		Expect(rep.State).To(Equal(report.PlatformUnknown))
		Expect(rep.Reason).To(Equal("cloud controller: 503"))
		Expect(rep.Fresh).To(BeTrue())
		Expect(rep.Requests).To(Equal(4))
		Expect(rep.Seconds).To(Equal(2.0))
		Expect(rep.ReadAt).To(Equal(readAt))
		Expect(rep.Plans).To(BeZero())
		Expect(rep.Counts).To(BeEmpty())
		Expect(rep.Counts).NotTo(BeNil())
		Expect(rep.OrphanDeployments).NotTo(BeNil())
		Expect(rep.PlatformOnly).NotTo(BeNil())
		Expect(rep.OrphanDeployments).To(BeEmpty())
		Expect(rep.PlatformOnly).To(BeEmpty())
	})

	It("has no read time when there was never a whole view", func() {
		Expect(platform.Unknown("x", 0, 0, nil).ReadAt.IsZero()).To(BeTrue())
	})
})

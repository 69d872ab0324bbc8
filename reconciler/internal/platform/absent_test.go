package platform_test

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Fill", func() {
	It("copies each orphan deployment's proof from the document, its first read in UTC", func() {
		since := time.Date(2025, 5, 30, 8, 15, 0, 0, time.FixedZone("CEST", 2*3600))
		rep := report.PlatformReport{OrphanDeployments: []report.PlatformInstance{
			{InstanceID: "a", State: report.OrphanDeployment}, {InstanceID: "b", State: report.OrphanDeployment}}}
		doc := platform.Doc{Absent: map[string]platform.Entry{"a": {Since: since.Unix(), Reads: 3},
			"gone": {Since: since.Unix(), Reads: 9}}}
		platform.Fill(&rep, doc, nil)
		Expect(rep.OrphanDeployments[0].AbsentSince).To(Equal(since.UTC()))
		Expect(rep.OrphanDeployments[0].AbsentSince.Location()).To(Equal(time.UTC))
		Expect(rep.OrphanDeployments[0].Reads).To(Equal(3))
		Expect(rep.OrphanDeployments[1].AbsentSince.IsZero()).To(BeTrue(), "b has no proof yet")
		Expect(rep.OrphanDeployments[1].Reads).To(BeZero())
		Expect(rep.OrphanDeployments).To(HaveLen(2), "the document's other proofs are not listed")
	})

	It("leaves the orphan deployments as they are with an empty document", func() {
		rep := report.PlatformReport{OrphanDeployments: []report.PlatformInstance{{InstanceID: "a"}}}
		platform.Fill(&rep, platform.Doc{}, nil)
		Expect(rep.OrphanDeployments).To(Equal([]report.PlatformInstance{{InstanceID: "a"}}))
	})

	It("says what each platform-only instance is restorable from, asking has only of those no deployment restores", func() {
		rep := report.PlatformReport{PlatformOnly: []report.PlatformInstance{
			{InstanceID: "dep", Restorable: "deployment"}, {InstanceID: "bak"}, {InstanceID: "none"}}}
		var asked []string
		platform.Fill(&rep, platform.Doc{}, func(id string) bool {
			asked = append(asked, id)
			return id == "bak" || id == "dep"
		})
		Expect(rep.PlatformOnly).To(Equal([]report.PlatformInstance{{InstanceID: "dep", Restorable: "deployment"},
			{InstanceID: "bak", Restorable: "backup"}, {InstanceID: "none", Restorable: "nothing"}}))
		Expect(asked).To(Equal([]string{"bak", "none"}))
	})

	It("says nothing restores a platform-only instance when there is no has", func() {
		rep := report.PlatformReport{PlatformOnly: []report.PlatformInstance{{InstanceID: "p"},
			{InstanceID: "d", Restorable: "deployment"}}}
		platform.Fill(&rep, platform.Doc{}, nil)
		Expect(rep.PlatformOnly[0].Restorable).To(Equal("nothing"))
		Expect(rep.PlatformOnly[1].Restorable).To(Equal("deployment"))
	})

	It("completes what Classify reports", func() {
		w := newWorld()
		w.has("od", record())
		w.runs("od")
		w.platformHas("claimed")
		w.claimed["claimed"] = true
		w.platformHas("backed")
		w.platformHas("lost")
		j := w.classify()
		platform.Fill(&j.Report, platform.Doc{Absent: map[string]platform.Entry{"od": {Since: readAt.Unix(), Reads: 2}}},
			func(id string) bool { return id == "backed" })
		Expect(j.Report.OrphanDeployments).To(ConsistOf(And(HaveField("InstanceID", "od"),
			HaveField("AbsentSince", readAt), HaveField("Reads", 2))))
		Expect(j.Report.PlatformOnly).To(HaveLen(3))
		Expect(j.Report.PlatformOnly[0]).To(And(HaveField("InstanceID", "backed"), HaveField("Restorable", "backup")))
		Expect(j.Report.PlatformOnly[1]).To(And(HaveField("InstanceID", "claimed"), HaveField("Restorable", "deployment")))
		Expect(j.Report.PlatformOnly[2]).To(And(HaveField("InstanceID", "lost"), HaveField("Restorable", "nothing")))
	})
})

var _ = Describe("Next", func() {
	earlier := readAt.Add(-24 * time.Hour).Unix()

	It("starts a new orphan deployment's proof at this read, once, and says it is fresh", func() {
		next, fresh := platform.Next(platform.Doc{}, []string{"a", "b"}, nil, readAt, 0)
		Expect(next.Absent).To(Equal(map[string]platform.Entry{"a": {Since: readAt.Unix(), Reads: 1},
			"b": {Since: readAt.Unix(), Reads: 1}}))
		Expect(fresh).To(Equal([]string{"a", "b"}))
	})

	It("carries an existing proof on: one read more, since its first", func() {
		doc := platform.Doc{Absent: map[string]platform.Entry{"a": {Since: earlier, Reads: 2}}}
		next, fresh := platform.Next(doc, []string{"a"}, nil, readAt, 0)
		Expect(next.Absent).To(Equal(map[string]platform.Entry{"a": {Since: earlier, Reads: 3, Last: readAt.Unix()}}))
		Expect(fresh).To(BeEmpty())
		Expect(doc.Absent["a"]).To(Equal(platform.Entry{Since: earlier, Reads: 2}), "the old document is not changed")
	})

	It("keeps the proof of a record not judged as it is, and starts none for one", func() {
		doc := platform.Doc{Absent: map[string]platform.Entry{"u": {Since: earlier, Reads: 4}}}
		next, fresh := platform.Next(doc, nil, []string{"u", "v"}, readAt, 0)
		Expect(next.Absent).To(Equal(map[string]platform.Entry{"u": {Since: earlier, Reads: 4}}))
		Expect(fresh).To(BeEmpty())
	})

	It("ends every other proof: the platform has the instance again, or its deployment is gone", func() {
		doc := platform.Doc{Absent: map[string]platform.Entry{"back": {Since: earlier, Reads: 5},
			"gone": {Since: earlier, Reads: 1}, "a": {Since: earlier, Reads: 1}}}
		next, fresh := platform.Next(doc, []string{"a"}, nil, readAt, 0)
		Expect(next.Absent).To(Equal(map[string]platform.Entry{"a": {Since: earlier, Reads: 2, Last: readAt.Unix()}}))
		Expect(fresh).To(BeEmpty())

		next, fresh = platform.Next(doc, nil, nil, readAt, 0)
		Expect(next.Absent).NotTo(BeNil())
		Expect(next.Absent).To(BeEmpty())
		Expect(fresh).To(BeEmpty())
	})

	It("does all at once", func() {
		doc := platform.Doc{Absent: map[string]platform.Entry{"old": {Since: earlier, Reads: 1},
			"held": {Since: earlier, Reads: 7}, "dropped": {Since: earlier, Reads: 3}}}
		next, fresh := platform.Next(doc, []string{"new", "old"}, []string{"held", "unseen"}, readAt, 0)
		Expect(next.Absent).To(Equal(map[string]platform.Entry{"new": {Since: readAt.Unix(), Reads: 1},
			"old": {Since: earlier, Reads: 2, Last: readAt.Unix()}, "held": {Since: earlier, Reads: 7}}))
		Expect(fresh).To(Equal([]string{"new"}))
	})

	Describe("MaxAbsent", func() {
		many := func(prefix string, n int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = fmt.Sprintf("%s%06d", prefix, i)
			}
			return out
		}
		docOf := func(list []string) platform.Doc {
			doc := platform.Doc{Absent: make(map[string]platform.Entry, len(list))}
			for _, id := range list {
				doc.Absent[id] = platform.Entry{Since: earlier, Reads: 1}
			}
			return doc
		}

		It("keeps the document within a state document's bounds, whatever the ids' length", func() {
			for _, length := range []int{36, 255} {
				orphans := make([]string, 3*platform.MaxAbsent)
				for i := range orphans {
					orphans[i] = fmt.Sprintf("%0*d", length, i)
				}
				next, _ := platform.Next(platform.Doc{}, orphans, nil, readAt, 0)
				next, _ = platform.Next(next, orphans, nil, readAt.Add(time.Hour), 0) // every field set
				data, err := json.Marshal(next)
				Expect(err).NotTo(HaveOccurred())
				Expect(len(data)).To(BeNumerically("<=", vault.MaxStateBytes), "ids of %d characters", length)
				if length == 36 {
					Expect(next.Absent).To(HaveLen(platform.MaxAbsent))
				} else {
					Expect(len(next.Absent)).To(BeNumerically(">", 500))
				}
			}
		})

		It("starts no proof beyond MaxAbsent", func() {
			orphans := many("o", platform.MaxAbsent+5)
			next, fresh := platform.Next(platform.Doc{}, orphans, nil, readAt, 0)
			Expect(next.Absent).To(HaveLen(platform.MaxAbsent))
			Expect(fresh).To(Equal(orphans[:platform.MaxAbsent]))
			Expect(next.Absent).NotTo(HaveKey(orphans[platform.MaxAbsent]))
		})

		It("still carries the existing proofs on, and starts none while the document is full", func() {
			existing := many("b", platform.MaxAbsent)
			orphans := append(existing, many("c", 3)...) // the new ones sort after
			next, fresh := platform.Next(docOf(existing), orphans, nil, readAt, 0)
			Expect(next.Absent).To(HaveLen(platform.MaxAbsent))
			Expect(next.Absent[existing[0]]).To(Equal(platform.Entry{Since: earlier, Reads: 2, Last: readAt.Unix()}))
			Expect(fresh).To(BeEmpty())
		})

		It("counts the proofs kept for the records not judged", func() {
			held := many("h", platform.MaxAbsent)
			next, fresh := platform.Next(docOf(held), []string{"z"}, held, readAt, 0)
			Expect(next.Absent).To(HaveLen(platform.MaxAbsent))
			Expect(fresh).To(BeEmpty())
		})

		// BUG (absent.go, Next): the cap is checked against the proofs
		// carried so far, in the order of orphans (sorted by id), so a new
		// orphan deployment that sorts before the existing ones is admitted
		// to a full document.
		It("starts no proof while the document is full, whatever the new ids sort as", func() {
			existing := many("b", platform.MaxAbsent)
			orphans := append([]string{"a"}, existing...) // sorted: the new one first
			next, fresh := platform.Next(docOf(existing), orphans, nil, readAt, 0)
			Expect(fresh).To(BeEmpty(), "the document follows MaxAbsent already")
			Expect(next.Absent).To(HaveLen(platform.MaxAbsent))
		})
	})
})

var _ = Describe("Entry.Proven", func() {
	since := readAt.Add(-time.Hour)
	minAge := time.Hour

	DescribeTable("needs three whole reads or more, the first and the last at least minAge apart",
		func(reads int, last, now time.Time, minAge time.Duration, proven bool) {
			Expect(platform.Entry{Since: since.Unix(), Reads: reads, Last: last.Unix()}.Proven(now, minAge)).To(Equal(proven))
		},
		Entry("three reads, the last exactly minAge after the first", 3, readAt, readAt, minAge, true),
		Entry("three reads, the last a second short of minAge", 3, readAt.Add(-time.Second), readAt, minAge, false),
		Entry("two reads, minAge apart", 2, readAt, readAt, minAge, false),
		Entry("many reads, long after", 9, readAt.Add(24*time.Hour), readAt.Add(24*time.Hour), minAge, true),
		Entry("three reads within minutes, asked long after: forced runs in a row prove nothing", 3,
			since.Add(2*time.Minute), readAt.Add(24*time.Hour), minAge, false),
		Entry("one read, long after", 1, since, readAt.Add(24*time.Hour), minAge, false),
		Entry("no read", 0, since, readAt.Add(24*time.Hour), minAge, false),
		Entry("three reads, no minimum age, at once", 3, since, since, time.Duration(0), true),
		Entry("three reads, now before the first read", 3, since, since.Add(-time.Second), time.Duration(0), false),
	)

	It("takes a proof written before reads were spread (no last) as its first read's", func() {
		Expect(platform.Entry{Since: since.Unix(), Reads: 5}.Proven(readAt.Add(24*time.Hour), minAge)).To(BeFalse())
		Expect(platform.Entry{Since: since.Unix(), Reads: 5}.Proven(since, 0)).To(BeTrue())
	})
})

var _ = Describe("Next, spreading the reads", func() {
	It("counts a read only a spacing after the last one counted, and proves an absence over min_age only", func() {
		minAge := time.Hour
		spacing := platform.Spacing(minAge)
		Expect(spacing).To(Equal(30 * time.Minute))
		t0 := readAt
		doc, _ := platform.Next(platform.Doc{}, []string{"a"}, nil, t0, spacing)
		for _, forced := range []time.Duration{time.Minute, 2 * time.Minute, 29 * time.Minute} {
			doc, _ = platform.Next(doc, []string{"a"}, nil, t0.Add(forced), spacing)
		}
		Expect(doc.Absent["a"]).To(Equal(platform.Entry{Since: t0.Unix(), Reads: 1}), "forced runs in a row: not counted")
		doc, _ = platform.Next(doc, []string{"a"}, nil, t0.Add(30*time.Minute), spacing)
		Expect(doc.Absent["a"].Reads).To(Equal(2))
		Expect(doc.Absent["a"].Proven(t0.Add(59*time.Minute), minAge)).To(BeFalse())
		doc, _ = platform.Next(doc, []string{"a"}, nil, t0.Add(59*time.Minute), spacing)
		Expect(doc.Absent["a"].Reads).To(Equal(2), "too soon after the second")
		doc, _ = platform.Next(doc, []string{"a"}, nil, t0.Add(60*time.Minute), spacing)
		Expect(doc.Absent["a"]).To(Equal(platform.Entry{Since: t0.Unix(), Reads: 3, Last: t0.Add(time.Hour).Unix()}))
		Expect(doc.Absent["a"].Proven(t0.Add(time.Hour), minAge)).To(BeTrue())
	})
})

var _ = Describe("Doc", func() {
	It("is equal to another holding the same proofs", func() {
		a := platform.Doc{Absent: map[string]platform.Entry{"x": {Since: 1, Reads: 2}}}
		Expect(a.Equal(platform.Doc{Absent: map[string]platform.Entry{"x": {Since: 1, Reads: 2}}})).To(BeTrue())
		Expect(a.Equal(platform.Doc{Absent: map[string]platform.Entry{"x": {Since: 1, Reads: 3}}})).To(BeFalse())
		Expect(a.Equal(platform.Doc{Absent: map[string]platform.Entry{"x": {Since: 2, Reads: 2}}})).To(BeFalse())
		Expect(a.Equal(platform.Doc{Absent: map[string]platform.Entry{"y": {Since: 1, Reads: 2}}})).To(BeFalse())
		Expect(a.Equal(platform.Doc{Absent: map[string]platform.Entry{"x": {Since: 1, Reads: 2},
			"y": {Since: 1, Reads: 2}}})).To(BeFalse())
		Expect(a.Equal(platform.Doc{})).To(BeFalse())
		Expect(platform.Doc{}.Equal(platform.Doc{Absent: map[string]platform.Entry{}})).To(BeTrue(), "none is none")
	})

	It("is the same after a Next that changes nothing, so the run writes nothing", func() {
		doc := platform.Doc{Absent: map[string]platform.Entry{"u": {Since: 5, Reads: 2}}}
		next, _ := platform.Next(doc, nil, []string{"u"}, readAt, 0)
		Expect(next.Equal(doc)).To(BeTrue())
		next, _ = platform.Next(doc, []string{"u"}, nil, readAt, 0)
		Expect(next.Equal(doc)).To(BeFalse())
	})

	It("is kept as JSON under the names the state document uses", func() {
		doc := platform.Doc{Absent: map[string]platform.Entry{"a": {Since: 1748779200, Reads: 2}}}
		out, err := json.Marshal(doc)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(out)).To(MatchJSON(`{"absent":{"a":{"since":1748779200,"reads":2}}}`))
		var back platform.Doc
		Expect(json.Unmarshal(out, &back)).To(Succeed())
		Expect(back.Equal(doc)).To(BeTrue())
		Expect(platform.DocName).To(Equal("platform"))
	})
})

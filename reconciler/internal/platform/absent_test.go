package platform_test

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
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
		next, fresh := platform.Next(platform.Doc{}, []string{"a", "b"}, nil, readAt)
		Expect(next.Absent).To(Equal(map[string]platform.Entry{"a": {Since: readAt.Unix(), Reads: 1},
			"b": {Since: readAt.Unix(), Reads: 1}}))
		Expect(fresh).To(Equal([]string{"a", "b"}))
	})

	It("carries an existing proof on: one read more, since its first", func() {
		doc := platform.Doc{Absent: map[string]platform.Entry{"a": {Since: earlier, Reads: 2}}}
		next, fresh := platform.Next(doc, []string{"a"}, nil, readAt)
		Expect(next.Absent).To(Equal(map[string]platform.Entry{"a": {Since: earlier, Reads: 3}}))
		Expect(fresh).To(BeEmpty())
		Expect(doc.Absent["a"]).To(Equal(platform.Entry{Since: earlier, Reads: 2}), "the old document is not changed")
	})

	It("keeps the proof of a record not judged as it is, and starts none for one", func() {
		doc := platform.Doc{Absent: map[string]platform.Entry{"u": {Since: earlier, Reads: 4}}}
		next, fresh := platform.Next(doc, nil, []string{"u", "v"}, readAt)
		Expect(next.Absent).To(Equal(map[string]platform.Entry{"u": {Since: earlier, Reads: 4}}))
		Expect(fresh).To(BeEmpty())
	})

	It("ends every other proof: the platform has the instance again, or its deployment is gone", func() {
		doc := platform.Doc{Absent: map[string]platform.Entry{"back": {Since: earlier, Reads: 5},
			"gone": {Since: earlier, Reads: 1}, "a": {Since: earlier, Reads: 1}}}
		next, fresh := platform.Next(doc, []string{"a"}, nil, readAt)
		Expect(next.Absent).To(Equal(map[string]platform.Entry{"a": {Since: earlier, Reads: 2}}))
		Expect(fresh).To(BeEmpty())

		next, fresh = platform.Next(doc, nil, nil, readAt)
		Expect(next.Absent).NotTo(BeNil())
		Expect(next.Absent).To(BeEmpty())
		Expect(fresh).To(BeEmpty())
	})

	It("does all at once", func() {
		doc := platform.Doc{Absent: map[string]platform.Entry{"old": {Since: earlier, Reads: 1},
			"held": {Since: earlier, Reads: 7}, "dropped": {Since: earlier, Reads: 3}}}
		next, fresh := platform.Next(doc, []string{"new", "old"}, []string{"held", "unseen"}, readAt)
		Expect(next.Absent).To(Equal(map[string]platform.Entry{"new": {Since: readAt.Unix(), Reads: 1},
			"old": {Since: earlier, Reads: 2}, "held": {Since: earlier, Reads: 7}}))
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

		It("starts no proof beyond MaxAbsent", func() {
			orphans := many("o", platform.MaxAbsent+5)
			next, fresh := platform.Next(platform.Doc{}, orphans, nil, readAt)
			Expect(next.Absent).To(HaveLen(platform.MaxAbsent))
			Expect(fresh).To(Equal(orphans[:platform.MaxAbsent]))
			Expect(next.Absent).NotTo(HaveKey(orphans[platform.MaxAbsent]))
		})

		It("still carries the existing proofs on, and starts none while the document is full", func() {
			existing := many("b", platform.MaxAbsent)
			orphans := append(existing, many("c", 3)...) // the new ones sort after
			next, fresh := platform.Next(docOf(existing), orphans, nil, readAt)
			Expect(next.Absent).To(HaveLen(platform.MaxAbsent))
			Expect(next.Absent[existing[0]]).To(Equal(platform.Entry{Since: earlier, Reads: 2}))
			Expect(fresh).To(BeEmpty())
		})

		It("counts the proofs kept for the records not judged", func() {
			held := many("h", platform.MaxAbsent)
			next, fresh := platform.Next(docOf(held), []string{"z"}, held, readAt)
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
			next, fresh := platform.Next(docOf(existing), orphans, nil, readAt)
			Expect(fresh).To(BeEmpty(), "the document follows MaxAbsent already")
			Expect(next.Absent).To(HaveLen(platform.MaxAbsent))
		})
	})
})

var _ = Describe("Entry.Proven", func() {
	since := readAt.Add(-time.Hour)
	minAge := time.Hour

	DescribeTable("needs two whole reads or more, the first at least minAge ago",
		func(reads int, now time.Time, minAge time.Duration, proven bool) {
			Expect(platform.Entry{Since: since.Unix(), Reads: reads}.Proven(now, minAge)).To(Equal(proven))
		},
		Entry("two reads, exactly minAge", 2, readAt, minAge, true),
		Entry("two reads, a second short of minAge", 2, readAt.Add(-time.Second), minAge, false),
		Entry("two reads, a nanosecond short of minAge", 2, readAt.Add(-time.Nanosecond), minAge, false),
		Entry("many reads, long after", 9, readAt.Add(24*time.Hour), minAge, true),
		Entry("one read, long after", 1, readAt.Add(24*time.Hour), minAge, false),
		Entry("no read", 0, readAt.Add(24*time.Hour), minAge, false),
		Entry("two reads, no minimum age, at once", 2, since, time.Duration(0), true),
		Entry("two reads, now before the first read", 2, since.Add(-time.Second), time.Duration(0), false),
	)
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
		next, _ := platform.Next(doc, nil, []string{"u"}, readAt)
		Expect(next.Equal(doc)).To(BeTrue())
		next, _ = platform.Next(doc, []string{"u"}, nil, readAt)
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

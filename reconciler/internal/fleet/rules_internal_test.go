package fleet

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// lister is a Director that lists the given names, or fails.
type lister struct {
	names []string
	err   error
}

func (l lister) Deployments(context.Context) ([]bosh.Deployment, error) {
	var out []bosh.Deployment
	for _, n := range l.names {
		out = append(out, bosh.Deployment{Name: n})
	}
	return out, l.err
}
func (lister) Manifest(context.Context, string) (string, error)              { return "", nil }
func (lister) VMs(context.Context, string) ([]bosh.VM, error)                { return nil, nil }
func (lister) Events(context.Context, bosh.EventQuery) ([]bosh.Event, error) { return nil, nil }

var _ = Describe("the rule for cached copies", func() {
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ttl := 5 * time.Minute

	DescribeTable("trusts a copy by the run's feed mode",
		func(mode string, fallback map[string]bool, name string, age time.Duration, want bool) {
			tr := TrustRule(mode, fallback, ttl, start)
			got := tr == nil || tr(name, start.Add(-age))
			Expect(got).To(Equal(want))
		},
		Entry("watch: any copy the feed did not name, however old", report.FeedWatch, nil, "d", 10*time.Hour, true),
		Entry("watch, another Director's feed unread: its copies by cache_ttl (young)", report.FeedWatch,
			map[string]bool{"d": true}, "d", time.Minute, true),
		Entry("watch, another Director's feed unread: its copies by cache_ttl (old)", report.FeedWatch,
			map[string]bool{"d": true}, "d", time.Hour, false),
		Entry("watch, another Director's feed unread: this one's copies still trusted", report.FeedWatch,
			map[string]bool{"e": true}, "d", time.Hour, true),
		Entry("fallback: by cache_ttl", report.FeedFallback, nil, "d", 4*time.Minute, true),
		Entry("fallback: too old", report.FeedFallback, nil, "d", 6*time.Minute, false),
		Entry("resync: by cache_ttl (the cache was cleared)", report.FeedResync, nil, "d", time.Minute, true),
	)
})

var _ = Describe("the Directors' feeds together", func() {
	w := func(mode, reason string, named ...string) *watch {
		x := &watch{report: report.FeedReport{Mode: mode, Reason: reason, Pages: 1, Events: len(named), LastID: "9"},
			named: map[string]bool{}}
		for _, n := range named {
			x.named[n] = true
		}
		return x
	}

	It("is a single Director's feed as it is", func() {
		one := w(report.FeedFallback, "refused", "a")
		Expect(merge([]*watch{one}, []string{"default"})).To(BeIdenticalTo(one))
	})

	DescribeTable("resync when every Director resyncs, else watch (each Director's deployments dealt with apart)",
		func(modes []string, want string) {
			var of []*watch
			var names []string
			for i, m := range modes {
				of = append(of, w(m, "why", string(rune('a'+i))))
				names = append(names, string(rune('a'+i)))
			}
			got := merge(of, names)
			Expect(got.report.Mode).To(Equal(want))
			Expect(got.report.Changed).To(Equal(len(modes)))
			Expect(got.report.Pages).To(Equal(len(modes)))
		},
		Entry("all watch", []string{report.FeedWatch, report.FeedWatch}, report.FeedWatch),
		Entry("all resync", []string{report.FeedResync, report.FeedResync}, report.FeedResync),
		Entry("all fall back: watch, each Director's copies by cache_ttl", []string{report.FeedFallback, report.FeedFallback}, report.FeedWatch),
		Entry("one resyncs", []string{report.FeedWatch, report.FeedResync}, report.FeedWatch),
		Entry("resync and fallback", []string{report.FeedResync, report.FeedFallback, report.FeedResync}, report.FeedWatch),
	)
})

var _ = Describe("a fleet", func() {
	ctx := context.Background()

	It("decides once what differs with a single Director", func() {
		one, err := New([]ports.NamedDirector{{Name: "default", Director: lister{}}})
		Expect(err).NotTo(HaveOccurred())
		m := one.members[0]
		Expect([]string{m.recorded, m.system, m.feedDoc}).To(Equal([]string{"", "director", "events"}))
		two, err := New([]ports.NamedDirector{{Name: "east", Director: lister{}}, {Name: "west", Director: lister{}}})
		Expect(err).NotTo(HaveOccurred())
		m = two.members[1]
		Expect([]string{m.recorded, m.system, m.feedDoc}).To(Equal([]string{"west", "director west", "events-west"}))
		_, err = New([]ports.NamedDirector{{Name: "east", Director: lister{}}, {Name: "east", Director: lister{}}})
		Expect(err).To(MatchError(ErrBadDirectors))
	})

	DescribeTable("tells a record whose deployment the run cannot know of",
		func(westDown bool, recorded string, want bool) {
			dirs, err := New([]ports.NamedDirector{{Name: "east", Director: lister{names: []string{"e1"}}},
				{Name: "west", Director: lister{names: []string{"w1"}, err: map[bool]error{true: errors.New("500")}[westDown]}}})
			Expect(err).NotTo(HaveOccurred())
			f := dirs.ForRun(20, memory.Policy{}, func(error) {})
			_, err = f.List(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(f.Unknown(&vault.Record{Director: recorded})).To(Equal(want))
		},
		Entry("its Director was listed", false, "west", false),
		Entry("its Director could not be listed", true, "west", true),
		Entry("another Director could not be listed", true, "east", false),
		Entry("it names no Director and one could not be listed", true, "", true),
		Entry("it names no Director and all were listed", false, "", false),
		Entry("it names a Director no longer configured", false, "north", true),
	)

	It("stops the run once no Director is left, and reports the others' failures", func() {
		dirs, err := New([]ports.NamedDirector{{Name: "east", Director: lister{names: []string{"d"}}}, {Name: "west", Director: lister{err: errors.New("500")}}})
		Expect(err).NotTo(HaveOccurred())
		var stopped error
		f := dirs.ForRun(1, memory.Policy{}, func(cause error) { stopped = cause })
		deps, err := f.List(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(deps).To(Equal([]bosh.Deployment{{Name: "d", Director: "east"}}))
		Expect(f.Errors()).To(ConsistOf(MatchError(ContainSubstring("Director west could not be listed"))))
		f.tripper(0)(errors.New("circuit open"))
		Expect(stopped).To(MatchError("circuit open"))
		Expect(f.Errors()).To(BeEmpty(), "the run's own error says why it stopped")
	})
})

var _ = Describe("the deployment a fleet keeps of each name", func() {
	ctx := context.Background()

	// chosen lists east's and west's deployments and chooses with the
	// owned records given (deployment -> the Director its record names).
	chosen := func(east, west []string, owned map[string]string) ([]string, []report.Conflict, []error) {
		GinkgoHelper()
		dirs, err := New([]ports.NamedDirector{{Name: "east", Director: lister{names: east}}, {Name: "west", Director: lister{names: west}}})
		Expect(err).NotTo(HaveOccurred())
		f := dirs.ForRun(20, memory.Policy{}, func(error) {})
		all, err := f.List(ctx)
		Expect(err).NotTo(HaveOccurred())
		deps, conflicts := f.Choose(all, func(name string) (string, string, bool) {
			director, ok := owned[name]
			return "id-" + name, director, ok
		})
		var out []string
		for _, d := range deps {
			out = append(out, d.Name+"@"+d.Director)
		}
		return out, conflicts, f.Errors()
	}

	DescribeTable("keeps an owned record's deployment on its own Director, and reports the others as conflicts",
		func(east, west []string, owned map[string]string, want []string, losers []string, dups int) {
			got, conflicts, errs := chosen(east, west, owned)
			Expect(got).To(Equal(want))
			var lost []string
			for _, c := range conflicts {
				Expect(c.Winner).To(Equal(c.Loser))
				lost = append(lost, c.Loser+"@"+c.LoserDirector)
			}
			Expect(lost).To(Equal(losers))
			Expect(errs).To(HaveLen(dups))
		},
		Entry("no owner: the first Director keeps a name listed twice (an error of the run)",
			[]string{"d"}, []string{"d"}, map[string]string{}, []string{"d@east"}, nil, 1),
		Entry("owned on west: west keeps it, east's copy is a conflict",
			[]string{"d"}, []string{"d"}, map[string]string{"d": "west"}, []string{"d@west"}, []string{"d@east"}, 0),
		Entry("owned on west, gone there: east's deployment of its name takes nothing",
			[]string{"d", "e"}, nil, map[string]string{"d": "west"}, []string{"e@east"}, []string{"d@east"}, 0),
		Entry("a record naming no Director lives on the first",
			[]string{"d"}, []string{"d"}, map[string]string{"d": ""}, []string{"d@east"}, []string{"d@west"}, 0),
		Entry("a record naming a Director not configured: nobody's copy is its",
			[]string{"d"}, nil, map[string]string{"d": "north"}, nil, []string{"d@east"}, 0),
	)
})

package versions_test

import (
	"fmt"

	"github.com/cloudfoundry-community/gogobosh"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/versions"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// uploads is a Director with redis 16.0.0 to 16.10.0 and 17.0.0-rc.1, and
// ubuntu-jammy 1.506 (used by dep-a and dep-b) and 1.600 (by dep-c).
var uploads = versions.Uploads{
	Releases: []bosh.Release{
		{Name: "redis", Versions: []bosh.ReleaseVersion{{Version: "16.0.0"}, {Version: "16.9.0"}, {Version: "16.10.0"}, {Version: "17.0.0-rc.1"}}},
		{Name: "bpm", Versions: []bosh.ReleaseVersion{{Version: "1.2.3"}}},
	},
	Stemcells: []bosh.Stemcell{
		{Name: "bosh-vsphere-esxi-ubuntu-jammy-go_agent", OperatingSystem: "ubuntu-jammy", Version: "1.506",
			Deployments: []bosh.StemcellUser{{Name: "dep-a"}, {Name: "dep-b"}}},
		{Name: "bosh-vsphere-esxi-ubuntu-jammy-go_agent", OperatingSystem: "ubuntu-jammy", Version: "1.600",
			Deployments: []bosh.StemcellUser{{Name: "dep-c"}}},
		{Name: "bosh-vsphere-esxi-ubuntu-noble-go_agent", OperatingSystem: "ubuntu-noble", Version: "2.1"},
	},
	ReleasesKnown: true, StemcellsKnown: true,
}

var (
	latestRedis = match.Latest{Name: "redis"}
	latestJammy = match.Latest{Stemcell: true, Name: "ubuntu-jammy", OS: true}
	runsRedis   = func(v string) []gogobosh.Resource {
		return []gogobosh.Resource{{Name: "redis", Version: v}, {Name: "bpm", Version: "1.2.3"}}
	}
	candidate = func(dep string, releases []gogobosh.Resource, asks ...match.Latest) versions.Candidate {
		return versions.Candidate{InstanceID: "i-" + dep, PlanID: "small", Deployment: dep, Asks: asks, Releases: releases}
	}
	releaseLag = func(running, newest string) report.Lag {
		return report.Lag{Type: "release", Name: "redis", Running: running, Newest: newest}
	}
)

var _ = Describe("instances behind the Director", func() {
	DescribeTable("Lags: what an instance asks for as the latest and runs an older version of",
		func(c versions.Candidate, u versions.Uploads, want []report.Lag) {
			Expect(versions.Lags(c, u)).To(Equal(want))
		},
		Entry("a newer release uploaded (the pre-release is newer still)",
			candidate("dep-a", runsRedis("16.9.0"), latestRedis), uploads, []report.Lag{releaseLag("16.9.0", "17.0.0-rc.1")}),
		Entry("the newest of a prefix: 16.10.0 > 16.9.0 numerically",
			candidate("dep-a", runsRedis("16.9.0"), match.Latest{Name: "redis", Prefix: "16"}), uploads,
			[]report.Lag{releaseLag("16.9.0", "16.10.0")}),
		Entry("running the newest: current", candidate("dep-a", runsRedis("17.0.0-rc.1"), latestRedis), uploads, []report.Lag(nil)),
		Entry("a newer stemcell of its os", candidate("dep-a", nil, latestJammy), uploads,
			[]report.Lag{{Type: "stemcell", Name: "ubuntu-jammy", Running: "1.506", Newest: "1.600"}}),
		Entry("the newest stemcell", candidate("dep-c", nil, latestJammy), uploads, []report.Lag(nil)),
		Entry("a stemcell asked by name",
			candidate("dep-b", nil, match.Latest{Stemcell: true, Name: "bosh-vsphere-esxi-ubuntu-jammy-go_agent"}), uploads,
			[]report.Lag{{Type: "stemcell", Name: "bosh-vsphere-esxi-ubuntu-jammy-go_agent", Running: "1.506", Newest: "1.600"}}),
		Entry("both, once each though asked twice", candidate("dep-a", runsRedis("16.0.0"), latestRedis, latestJammy, latestJammy), uploads,
			[]report.Lag{releaseLag("16.0.0", "17.0.0-rc.1"), {Type: "stemcell", Name: "ubuntu-jammy", Running: "1.506", Newest: "1.600"}}),
		Entry("what it does not run, or runs unknown to the Director: not judged",
			candidate("dep-x", []gogobosh.Resource{{Name: "bpm", Version: "1.2.3"}}, latestRedis, latestJammy,
				match.Latest{Stemcell: true, Name: "ubuntu-noble", OS: true}, match.Latest{Name: "valkey"}), uploads, []report.Lag(nil)),
		Entry("what the Director could not say: not judged",
			candidate("dep-a", runsRedis("16.0.0"), latestRedis, latestJammy), versions.Uploads{Releases: uploads.Releases}, []report.Lag(nil)),
	)

	It("lists at most 20 lags of an instance", func() {
		var asks []match.Latest
		var runs []gogobosh.Resource
		u := versions.Uploads{ReleasesKnown: true}
		for i := range 30 {
			name := fmt.Sprint("r", i)
			asks, runs = append(asks, match.Latest{Name: name}), append(runs, gogobosh.Resource{Name: name, Version: "1"})
			u.Releases = append(u.Releases, bosh.Release{Name: name, Versions: []bosh.ReleaseVersion{{Version: "2"}}})
		}
		Expect(versions.Lags(candidate("d", runs, asks...), u)).To(HaveLen(20))
	})

	It("summarizes: every one counted by plan, every asking plan at 0 or more, the first 100 by id", func() {
		var list []report.Behind
		for i := range 150 {
			list = append(list, report.Behind{InstanceID: fmt.Sprintf("i-%03d", 149-i), PlanID: "small", Lags: []report.Lag{releaseLag("1", "2")}})
		}
		r := versions.SummarizeBehind(list, map[string]int{"small": 160, "large": 3}, 2, []string{"Director west: listing releases: boom"})
		Expect(r.Count).To(Equal(150))
		Expect(r.ByPlan).To(Equal(map[string]int{"small": 150, "large": 0}))
		Expect(r.Asking).To(Equal(163))
		Expect(r.Unknown).To(Equal(2))
		Expect(r.Instances).To(HaveLen(100))
		Expect(r.Instances[0].InstanceID).To(Equal("i-000"))
		Expect(r.ByInstance).To(HaveLen(150))
		Expect(r.ByInstance["i-149"]).To(Equal([]report.Lag{releaseLag("1", "2")}))
		Expect(r.Errors).To(ConsistOf("Director west: listing releases: boom"))

		empty := versions.SummarizeBehind(nil, map[string]int{"small": 1}, 0, nil)
		Expect(empty.Instances).To(BeEmpty())
		Expect(empty.Instances).NotTo(BeNil(), "[] in JSON")
		Expect(empty.Errors).NotTo(BeNil())
	})
})

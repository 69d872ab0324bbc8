package main

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

var _ = DescribeTable("-memory-limit reads a size as GOMEMLIMIT does",
	func(v string, want int64, ok bool) {
		got, err := parseMemoryLimit(v)
		if !ok {
			Expect(err).To(MatchError(ContainSubstring(v)))
			return
		}
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
	},
	Entry("MiB", "450MiB", int64(450<<20), true),
	Entry("GiB", "2GiB", int64(2<<30), true),
	Entry("bytes", "1000", int64(1000), true),
	Entry("B", "1000B", int64(1000), true),
	Entry("a decimal unit", "450MB", int64(0), false),
	Entry("zero", "0", int64(0), false),
	Entry("negative", "-1MiB", int64(0), false),
	Entry("too large", "9000000TiB", int64(0), false),
	Entry("no number", "MiB", int64(0), false),
)

var _ = Describe("a steady run's target", func() {
	It("holds its counts apart from its bounds of time and memory", func() {
		r := result{Deployments: 40, Directors: 1, DirectorRequests: map[string]int{"GET /deployments": 1, "GET /events": 1},
			VaultWrites: 1, Converged: true, WallS: 0.1, PeakRSSBytes: 1 << 20, HealthHanded: 40}
		r.judge("steady", 0, 5)
		Expect(r.CountsMet).To(BeTrue())
		Expect(r.TargetMet).To(BeTrue())

		r.WallS = 60 // a busy machine
		r.judge("steady", 0, 5)
		Expect(r.CountsMet).To(BeTrue())
		Expect(r.TargetMet).To(BeFalse())

		r.WallS, r.VaultWrites = 0.1, 2 // a write too many
		r.judge("steady", 0, 5)
		Expect(r.CountsMet).To(BeFalse())
		Expect(r.TargetMet).To(BeFalse())
	})
})

var _ = Describe("the footprint's target", func() {
	It("holds its counts apart from its bounds of time", func() {
		r := result{footprintFigures: &footprintFigures{BrokerDeploys: 24, QueueWaitP99MS: 0.2, OutOfBandS: 55, UnresponsiveS: 73,
			MostSweepTasksAtOnce: []int{1}}}
		r.judgeFootprint()
		Expect(r.CountsMet).To(BeTrue())
		Expect(r.TargetMet).To(BeTrue())

		r.OutOfBandS = 120 // seen, but late: a busy machine
		r.judgeFootprint()
		Expect(r.CountsMet).To(BeTrue())
		Expect(r.TargetMet).To(BeFalse())

		r.OutOfBandS, r.MostSweepTasksAtOnce = 55, []int{2} // two vm-state tasks at once
		r.judgeFootprint()
		Expect(r.CountsMet).To(BeFalse())
		Expect(r.TargetMet).To(BeFalse())
	})
})

var _ = Describe("the scenarios a bench runs", func() {
	It("runs cold alone before footprint, and every reconciler scenario before a later one", func() {
		f, err := parseFlags([]string{"-scenarios", "footprint"}, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		var runs []string
		for _, sc := range reconcileOrder {
			if f.needs(sc) {
				runs = append(runs, sc)
			}
		}
		Expect(runs).To(Equal([]string{"cold", "footprint"}))

		f, err = parseFlags([]string{"-scenarios", "gap"}, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.needs("steady-1pct")).To(BeTrue())
		Expect(f.needs("footprint")).To(BeFalse())
	})
})

var _ = Describe("-health-sweep", func() {
	It("is the daemon's default unless set, 0 turns the sweep off, a negative one is refused", func() {
		f, err := parseFlags(nil, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.healthSweep).To(Equal(config.Default().Reconciler.HealthSweep))

		f, err = parseFlags([]string{"-health-sweep", "0"}, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.healthSweep).To(BeZero())

		var out strings.Builder
		_, err = parseFlags([]string{"-health-sweep", "-1h"}, &out)
		Expect(err).To(HaveOccurred())
		Expect(out.String()).To(ContainSubstring("-health-sweep: -1h0m0s is negative"))
	})
})

var _ = Describe("-runprofile", func() {
	AfterEach(func() { runProfile = "" })

	It("takes a prefix, and refuses to run beside -cpuprofile (one CPU profile at a time)", func() {
		_, err := parseFlags([]string{"-runprofile", "/tmp/p"}, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Expect(runProfile).To(Equal("/tmp/p"))

		var out strings.Builder
		_, err = parseFlags([]string{"-runprofile", "/tmp/p", "-cpuprofile", "/tmp/c"}, &out)
		Expect(err).To(HaveOccurred())
		Expect(out.String()).To(ContainSubstring("one CPU profile at a time"))
	})
})

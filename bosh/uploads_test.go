package bosh_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("Releases and Stemcells against the simulator", func() {
	It("lists every uploaded version, and which deployments use each stemcell, in one request each", func() {
		d := startDirector(sim.Options{TaskDuration: 10 * time.Millisecond,
			Releases: []string{"redis/16.1.0", "redis/16.0.0"}, Stemcells: []string{"ubuntu-jammy/1.506"}})
		c := newClient(d)
		ctx := ctxFor(30 * time.Second)
		latest := strings.Replace(strings.Replace(manifest("redis-a"), `version: "16.1.0"`, "version: latest", 1),
			`version: "1.506"`, "version: latest", 1)
		t, err := c.Deploy(ctx, []byte(latest))
		Expect(err).NotTo(HaveOccurred())
		t, err = c.WaitTask(ctx, t.ID, 10*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.State).To(Equal(bosh.TaskDone))
		d.UploadRelease("redis", "16.2.0")
		d.UploadStemcell("ubuntu-jammy", "1.600")

		d.ResetStats()
		releases, err := c.Releases(ctx)
		Expect(err).NotTo(HaveOccurred())
		stemcells, err := c.Stemcells(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Stats().Requests).To(Equal(map[string]int{"GET /releases": 1, "GET /stemcells": 1}))

		Expect(releases).To(ConsistOf(And(HaveField("Name", "redis"), HaveField("Versions", ConsistOf(
			And(HaveField("Version", "16.0.0"), HaveField("CurrentlyDeployed", false)),
			And(HaveField("Version", "16.1.0"), HaveField("CurrentlyDeployed", true), HaveField("JobNames", ContainElement("redis"))),
			And(HaveField("Version", "16.2.0"), HaveField("CurrentlyDeployed", false)),
		)))))
		Expect(stemcells).To(ConsistOf(
			And(HaveField("OperatingSystem", "ubuntu-jammy"), HaveField("Version", "1.506"),
				HaveField("Deployments", Equal([]bosh.StemcellUser{{Name: "redis-a"}}))),
			And(HaveField("OperatingSystem", "ubuntu-jammy"), HaveField("Version", "1.600"), HaveField("Deployments", BeEmpty())),
		))
		Expect(c.Manifest(ctx, "redis-a")).To(ContainSubstring("version: latest"), "the Director keeps the manifest as sent")
	})

	It("names the call in its errors, and surfaces the Director's", func() {
		d := startDirector(sim.Options{})
		c := newClient(d)
		ctx := ctxFor(10 * time.Second)
		Expect(d.Faults().Inject(sim.Failure{Endpoint: "GET /releases", Status: 500, Count: 1})).To(Succeed())
		_, err := c.Releases(ctx)
		Expect(err).To(MatchError(And(HavePrefix("listing releases: "), ContainSubstring("status 500"))))
		Expect(d.Faults().Inject(sim.Failure{Endpoint: "GET /stemcells", Status: 401, Count: 1})).To(Succeed())
		_, err = c.Stemcells(ctx)
		Expect(err).To(MatchError(bosh.ErrUnauthorized))
		Expect(err).To(MatchError(HavePrefix("listing stemcells: ")))
	})
})

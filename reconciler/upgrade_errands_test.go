package reconciler_test

import (
	"context"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// A plan's post-deploy errands (plan.yml lifecycle_errands.post_deploy) run
// after a fleet upgrade's deploy as after a provision's or an update's.
var _ = Describe("fleet upgrades of a plan with post-deploy errands", func() {
	ctx := context.Background()
	withErrands := func(version, release string) *catalog.Catalog {
		cat := upgradeCatalog(version, release)
		cat.Services[0].Plans[0].PostDeployErrands = []string{"redis"}
		return cat
	}
	errandRuns := func(f *fleet) []string {
		var out []string
		for _, t := range f.e.sim.TaskLog() {
			if strings.HasPrefix(t.Description, "run errand") {
				out = append(out, t.Description+": "+t.State)
			}
		}
		return out
	}
	script := func(f *fleet, outcomes string) {
		GinkgoHelper()
		req, err := http.NewRequest(http.MethodPut, f.e.sim.URL()+"/_sim/errands", strings.NewReader(`{"outcomes": `+outcomes+`}`))
		Expect(err).NotTo(HaveOccurred())
		res, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusNoContent))
	}

	It("run them after each deploy; one that fails ends its upgrade errand_failed, the deploy recorded, and stops the wave after a canary", func() {
		f := newFleetOn(sim.Options{TaskDuration: 150 * time.Millisecond, ErrandJobs: []string{"redis"}}, 3, nil)

		By("errands that succeed")
		f.use(withErrands("2.0.0", "16.2.0"), nil)
		rep := f.upgrade(reconciler.UpgradeRequest{Canaries: intp(1), MaxInFlight: intp(1)})
		Expect(rep.Counts).To(Equal(map[string]int{"upgraded": 3}))
		Expect(errandRuns(f)).To(ConsistOf(
			"run errand redis from deployment "+f.deployment(f.ids[0])+": done",
			"run errand redis from deployment "+f.deployment(f.ids[1])+": done",
			"run errand redis from deployment "+f.deployment(f.ids[2])+": done"), "one run after each deploy")

		By("an errand that fails on the canary")
		script(f, `[{"errand": "redis", "exit_code": 3, "stderr": "smoke test: cannot connect to 10.0.0.7:6379"}]`)
		f.use(withErrands("3.0.0", "16.3.0"), nil)
		rep = f.upgrade(reconciler.UpgradeRequest{Canaries: intp(1), MaxInFlight: intp(1)})
		Expect(rep.Counts).To(Equal(map[string]int{"errand_failed": 1, "pending": 2}), "no instance after a failed canary")
		Expect(rep.Done()).To(BeFalse())
		var canary report.UpgradeResult
		for _, r := range rep.Instances {
			if r.State == "errand_failed" {
				canary = r
			}
		}
		Expect(canary.Reason).To(And(ContainSubstring("post-deploy errand redis exited 3 on redis/"),
			ContainSubstring("smoke test: cannot connect to 10.0.0.7:6379")), "the tail of its standard error")
		Expect(f.running(canary.InstanceID)).To(ContainSubstring("16.3.0"), "nothing rolled back")
		rec, err := f.e.store.Record(ctx, canary.InstanceID)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.MaintenanceVersion).To(Equal("3.0.0"), "what runs is recorded")
		Expect(rec.LastOperation).To(HaveField("Type", "provision"), "the record's operation is put back")
		Expect(eventKinds(canary.InstanceID, f.e.store)[:2]).To(Equal([]string{"errand_failed", "upgraded"}))
	})
})

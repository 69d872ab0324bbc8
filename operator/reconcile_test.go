package operator_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/operator"
)

var _ = Describe("/b/reconcile", func() {
	var e *env

	BeforeEach(func() {
		e = newEnv()
		Eventually(func() int { return e.request("POST", "/b/reconcile", "").Status }).Should(Equal(http.StatusAccepted))
	})

	It("forces a run (202 with its id) and shows the status", func() {
		a := e.request("POST", "/b/reconcile", "")
		Expect(a.Status).To(Equal(http.StatusAccepted))
		Expect(a.Body["run_id"]).NotTo(BeEmpty())
		st := e.request("GET", "/b/reconcile", "")
		Expect(st.Status).To(Equal(http.StatusOK))
		Expect(st.Body).To(HaveKey("phase"))
		Expect(st.Body).To(HaveKey("orphans"))
		Expect(st.Body).To(HaveKey("unmatched"))
	})

	It("runs over a scope given in the query, and refuses a scope value twice or malformed", func() {
		e.provisioned("s-1", "redis-small")
		a := e.request("POST", "/b/reconcile?wait=30s&instance=s-1&plan=redis-small", "")
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		Expect(a.Body["summary"]).To(HaveKeyWithValue("scope", Equal(map[string]any{"instance": "s-1", "plan": "redis-small"})))
		Expect(a.Body["summary"]).To(HaveKeyWithValue("matched", 1.0))
		Expect(e.request("POST", "/b/reconcile?instance=a&instance=b", "").Status).To(Equal(http.StatusBadRequest))
		bad := e.request("POST", "/b/reconcile?deployment=a%20b", "")
		Expect(bad.Status).To(Equal(http.StatusBadRequest))
		Expect(bad.Body["description"]).To(ContainSubstring("deployment"))
	})

	It("clears the cache by default, and runs with the cache and the event feed with ?refresh=false", func() {
		forced := e.request("POST", "/b/reconcile?wait=30s", "")
		Expect(forced.Status).To(Equal(http.StatusOK), forced.Raw)
		Expect(forced.Body["summary"]).To(HaveKeyWithValue("forced", true))
		Expect(forced.Body["summary"]).To(HaveKeyWithValue("feed", HaveKeyWithValue("mode", "resync")))
		plain := e.request("POST", "/b/reconcile?wait=30s&refresh=false", "")
		Expect(plain.Status).To(Equal(http.StatusOK), plain.Raw)
		Expect(plain.Body["summary"]).To(HaveKeyWithValue("forced", false))
		Expect(plain.Body["summary"]).To(HaveKeyWithValue("feed", HaveKeyWithValue("mode", "watch")))
		Expect(e.request("POST", "/b/reconcile?refresh=maybe", "").Status).To(Equal(http.StatusBadRequest))
	})

	It("waits for the run with ?wait= and brings a lost index entry back; a dry run writes nothing", func() {
		ctx := context.Background()
		e.provisioned("r-1", "redis-small")
		before := e.record("r-1")
		Expect(e.store.Indexes.Remove(ctx, "r-1")).To(Succeed())
		Expect(e.record("r-1")).To(BeNil())

		dry := e.request("POST", "/b/reconcile?dry_run=true", "")
		Expect(dry.Status).To(Equal(http.StatusOK), dry.Raw)
		Expect(dry.Body["summary"]).To(HaveKeyWithValue("dry_run", true))
		Expect(dry.Body["summary"]).To(HaveKey("plan"))
		Expect(e.record("r-1")).To(BeNil(), "a dry run writes nothing")

		a := e.request("POST", "/b/reconcile?wait=30s", "")
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		Expect(a.Body["summary"]).To(HaveKeyWithValue("run_id", a.Body["run_id"]))
		back := e.record("r-1")
		Expect(back).NotTo(BeNil())
		Expect(back.ServiceID).To(Equal(before.ServiceID))
		Expect(back.PlanID).To(Equal(before.PlanID))
		Expect(back.DeploymentName).To(Equal(before.DeploymentName))
		Expect(back.OrganizationGUID).To(Equal(before.OrganizationGUID))
		Expect(back.SpaceGUID).To(Equal(before.SpaceGUID))
	})

	It("answers 504 with a clear message when the wait ends before the run", func() {
		e.director.Knobs().SetLatency(time.Second)
		DeferCleanup(func() { e.director.Knobs().SetLatency(0) })
		a := e.request("POST", "/b/reconcile?wait=100ms", "")
		Expect(a.Status).To(Equal(http.StatusGatewayTimeout), a.Raw)
		Expect(a.Body["error"]).To(ContainSubstring("had not ended after 100ms"))
		Expect(a.Body["run_id"]).NotTo(BeEmpty())
	})

	It("refuses a wait that is not a duration with 400", func() {
		Expect(e.request("POST", "/b/reconcile?wait=forever", "").Status).To(Equal(http.StatusBadRequest))
		Expect(e.request("POST", "/b/reconcile?dry_run=maybe", "").Status).To(Equal(http.StatusBadRequest))
		Expect(e.request("DELETE", "/b/reconcile", "").Status).To(Equal(http.StatusMethodNotAllowed))
	})
})

var _ = Describe("ReconcileHandler", func() {
	It("answers /b/reconcile with 503 when no reconciler is wired", func() {
		rec := httptest.NewRecorder()
		operator.ReconcileHandler(nil, nil).ServeHTTP(rec, httptest.NewRequest("POST", "/b/reconcile", nil))
		Expect(rec.Code).To(Equal(http.StatusServiceUnavailable))
	})
})

package operator_test

import (
	"context"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("/b/instances and /b/runs", func() {
	var e *env

	BeforeEach(func() {
		e = newEnv()
		Eventually(func() int { return e.request("POST", "/b/reconcile", "").Status }).Should(Equal(http.StatusAccepted))
	})

	It("shows an instance's record, match, backups and history, and the run log", func() {
		e.provisioned("r-1", "redis-small")
		Expect(e.request("POST", "/b/reconcile?wait=30s", "").Status).To(Equal(http.StatusOK))

		a := e.request("GET", "/b/instances/r-1", "")
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		Expect(a.Body).To(HaveKeyWithValue("deployment", "redis-small-r-1"))
		Expect(a.Body["match"]).To(HaveKeyWithValue("strategy", "metadata"), "r-1 is no UUID: matched by properties.blacksmith")
		Expect(a.Body["record"]).To(HaveKeyWithValue("match_strategy", "metadata"))
		Expect(a.Body).To(HaveKeyWithValue("quarantine", BeNil()))
		Expect(a.Body["backups"]).NotTo(BeEmpty(), "the broker backs a succeeded provision up")
		var kinds []string
		for _, ev := range a.Body["history"].([]any) {
			kinds = append(kinds, ev.(map[string]any)["kind"].(string))
		}
		Expect(kinds).To(ContainElements("provision", "operation_succeeded"))
		Expect(a.Raw).NotTo(ContainSubstring("password"), "no secret in the history")

		runs := e.request("GET", "/b/runs?limit=2", "")
		Expect(runs.Status).To(Equal(http.StatusOK), runs.Raw)
		Expect(runs.Body["runs"]).To(HaveLen(2))
		Expect(runs.Body["runs"].([]any)[0]).To(HaveKey("result"))
	})

	It("answers 404 for an unknown instance and 400 for bad input, naming it", func() {
		Expect(e.request("GET", "/b/instances/nope", "").Status).To(Equal(http.StatusNotFound))
		a := e.request("GET", "/b/instances/"+strings.Repeat("x", 256), "")
		Expect(a.Status).To(Equal(http.StatusBadRequest))
		Expect(a.Body["description"]).To(ContainSubstring("longer than 255"))
		Expect(e.request("GET", "/b/runs?limit=0", "").Status).To(Equal(http.StatusBadRequest))
		Expect(e.request("POST", "/b/instances/r-1/restore?redeploy=maybe", "").Status).To(Equal(http.StatusBadRequest))
		Expect(e.request("POST", "/b/reconcile?instance=a%20b", "").Status).To(Equal(http.StatusBadRequest))
		Expect(e.request("DELETE", "/b/instances/r-1", "").Status).To(Equal(http.StatusNotFound))
	})

	It("rolls an instance back with a redeploy through POST /b/instances/{id}/restore", func() {
		ctx := context.Background()
		e.provisioned("r-2", "redis-small")
		Expect(e.request("POST", "/b/reconcile?wait=30s", "").Status).To(Equal(http.StatusOK))
		backups, err := e.store.Backups(ctx, "r-2")
		Expect(err).NotTo(HaveOccurred())
		Expect(backups).NotTo(BeEmpty())

		a := e.request("POST", "/b/instances/r-2/restore?redeploy=true&backup="+backups[0], "")
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		Expect(a.Body).To(HaveKeyWithValue("redeployed", true))
		Expect(a.Body["task_id"]).NotTo(BeZero())
		Expect(a.Body["note"]).To(ContainSubstring("nothing to undo"))

		missing := e.request("POST", "/b/instances/r-2/restore?backup=20200101T000000Z-0000", "")
		Expect(missing.Status).To(BeElementOf(http.StatusNotFound, http.StatusBadRequest), missing.Raw)
	})
})

var _ = Describe("POST /b/instances/{id}/adopt", func() {
	It("confirms an instance the reconciler adopted from the Director, once", func() {
		e := newEnv()
		Expect(e.director.PutDeployment(`name: found-elsewhere
releases: [{name: redis, version: "16.1.0"}]
stemcells: [{alias: default, os: ubuntu-jammy, version: "1.0"}]
instance_groups:
- {name: redis, instances: 1, azs: [z1], vm_type: default, stemcell: default, networks: [{name: default}], jobs: [{name: redis, release: redis}]}
properties:
  blacksmith: {service_id: redis, plan_id: redis-small, instance_id: found-1}
`)).To(Succeed())
		Eventually(func() int { return e.request("POST", "/b/reconcile?wait=30s", "").Status }).Should(Equal(http.StatusOK))
		v := e.request("GET", "/b/instances/found-1", "")
		Expect(v.Status).To(Equal(http.StatusOK), v.Raw)
		Expect(v.Body["record"]).To(And(HaveKeyWithValue("adopted", true), HaveKey("adopted_at")))

		a := e.request("POST", "/b/instances/found-1/adopt", "")
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		Expect(a.Body["record"]).To(And(Not(HaveKey("adopted")), HaveKey("adoption_confirmed_at")))
		v = e.request("GET", "/b/instances/found-1", "")
		Expect(v.Body["history"]).To(ContainElement(And(HaveKeyWithValue("kind", "adopted"),
			HaveKeyWithValue("actor", ContainSubstring("operator")))))

		again := e.request("POST", "/b/instances/found-1/adopt", "")
		Expect(again.Status).To(Equal(http.StatusConflict), again.Raw)
		Expect(again.Body["description"]).To(ContainSubstring("not an adoption awaiting confirmation"))
		Expect(e.request("POST", "/b/instances/nobody/adopt", "").Status).To(Equal(http.StatusNotFound))
	})
})

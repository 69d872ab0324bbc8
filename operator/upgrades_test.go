package operator_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/operator"
)

var _ = Describe("/b/upgrades", func() {
	var e *env

	BeforeEach(func() {
		// Instances provisioned at redis-small 1.0.0 (redis 16.1.0); the
		// reconciler's catalog has 2.0.0 (redis 16.2.0).
		e = newEnvWith(envOptions{catalog: versionedCatalog("1.0.0", "16.1.0"), upgraded: versionedCatalog("2.0.0", "16.2.0")})
		Eventually(func() int { return e.request("POST", "/b/reconcile", "").Status }).Should(Equal(http.StatusAccepted))
	})

	// provisioned provisions ids at 1.0.0.
	provisioned := func(ids ...string) {
		GinkgoHelper()
		for _, id := range ids {
			e.provisioned(id, "redis-small")
			Expect(e.record(id).MaintenanceVersion).To(Equal("1.0.0"))
		}
	}
	// ended is GET /b/upgrades once the current fleet upgrade has ended.
	ended := func(query string) answer {
		GinkgoHelper()
		var a answer
		Eventually(func() any {
			a = e.request("GET", "/b/upgrades"+query, "")
			return a.Body["current"]
		}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(HaveKeyWithValue("running", false))
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		return a
	}

	It("requires the operator's credentials and refuses a cross-origin POST, starting nothing", func() {
		provisioned("u-1")
		anonymous := e.send("POST", "/b/upgrades", "", func(*http.Request) {})
		Expect(anonymous.Status).To(Equal(http.StatusUnauthorized))
		Expect(e.send("GET", "/b/upgrades", "", func(*http.Request) {}).Status).To(Equal(http.StatusUnauthorized))
		cross := e.send("POST", "/b/upgrades", "", func(req *http.Request) {
			req.SetBasicAuth(opUser, opPass)
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			req.Header.Set("Origin", "https://evil.invalid")
		})
		Expect(cross.Status).To(Equal(http.StatusForbidden))
		st := e.request("GET", "/b/upgrades", "")
		Expect(st.Status).To(Equal(http.StatusOK), st.Raw)
		Expect(st.Body).To(HaveKeyWithValue("current", BeNil()), "no fleet upgrade started")
		Expect(e.record("u-1").MaintenanceVersion).To(Equal("1.0.0"))
	})

	It("starts a fleet upgrade (202 with its report), refuses a second while it runs (409), and GET shows it, its instances bounded", func() {
		provisioned("u-1", "u-2")
		a := e.request("POST", "/b/upgrades?canaries=1&max_in_flight=1&max_failures=0&attempt_limit=2", "")
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Expect(a.Body).To(And(HaveKeyWithValue("id", Not(BeEmpty())), HaveKeyWithValue("trigger", "operator"),
			HaveKeyWithValue("dry_run", false), HaveKeyWithValue("running", true), HaveKey("started_at")))
		Expect(a.Body["rules"]).To(Equal(map[string]any{"canaries": 1.0, "max_in_flight": 1.0, "max_failures": 0.0, "attempt_limit": 2.0}))

		again := e.request("POST", "/b/upgrades", "")
		Expect(again.Status).To(Equal(http.StatusConflict), again.Raw)
		Expect(again.Body["description"]).To(ContainSubstring("already running"))

		st := ended("")
		Expect(st.Body).To(And(HaveKeyWithValue("mode", "report"), HaveKeyWithValue("in_flight", BeEmpty()),
			HaveKeyWithValue("quarantined", BeEmpty()), HaveKeyWithValue("instances_left_off", 0.0), HaveKeyWithValue("problems", BeEmpty())))
		current := st.Body["current"].(map[string]any)
		Expect(current["id"]).To(Equal(a.Body["id"]), "the fleet upgrade POST started, not another")
		Expect(current["counts"]).To(Equal(map[string]any{"upgraded": 2.0}))
		Expect(current["instances"]).To(ConsistOf(
			And(HaveKeyWithValue("instance_id", "u-1"), HaveKeyWithValue("from", "1.0.0"), HaveKeyWithValue("to", "2.0.0"),
				HaveKeyWithValue("state", "upgraded"), HaveKeyWithValue("task_id", BeNumerically(">", 0))),
			And(HaveKeyWithValue("instance_id", "u-2"), HaveKeyWithValue("state", "upgraded"))))
		Expect(e.record("u-1").MaintenanceVersion).To(Equal("2.0.0"))
		Expect(e.record("u-2").MaintenanceVersion).To(Equal("2.0.0"))

		bounded := e.request("GET", "/b/upgrades?instances=1", "")
		Expect(bounded.Status).To(Equal(http.StatusOK), bounded.Raw)
		Expect(bounded.Body).To(HaveKeyWithValue("instances_left_off", 1.0))
		Expect(bounded.Body["current"]).To(And(HaveKeyWithValue("instances", HaveLen(1)),
			HaveKeyWithValue("counts", map[string]any{"upgraded": 2.0})), "the counts count every instance")
		none := e.request("GET", "/b/upgrades?instances=0", "")
		Expect(none.Body).To(HaveKeyWithValue("instances_left_off", 2.0))
		Expect(none.Body["current"]).To(HaveKeyWithValue("instances", BeEmpty()))
	})

	It("makes a dry run that changes nothing, and an upgrade of the instances named whose failure is rolled back and quarantined", func() {
		provisioned("u-1", "u-2")
		dry := e.request("POST", "/b/upgrades?dry_run=true", "")
		Expect(dry.Status).To(Equal(http.StatusAccepted), dry.Raw)
		Expect(dry.Body).To(HaveKeyWithValue("dry_run", true))
		Expect(ended("").Body["current"]).To(HaveKeyWithValue("counts", map[string]any{"would_upgrade": 2.0}))
		Expect(e.record("u-1").MaintenanceVersion).To(Equal("1.0.0"), "a dry run writes nothing")

		e.director.FailNextTask(e.record("u-1").DeploymentName)
		a := e.request("POST", "/b/upgrades?instance=u-1", "")
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Expect(a.Body["scope"]).To(Equal(map[string]any{"instances": []any{"u-1"}}))
		st := ended("")
		Expect(st.Body["current"]).To(HaveKeyWithValue("counts", map[string]any{"rolled_back": 1.0}))
		Expect(st.Body["quarantined"]).To(ConsistOf(And(HaveKeyWithValue("instance_id", "u-1"), HaveKeyWithValue("failures", 1.0),
			HaveKeyWithValue("state", "rolled_back"), HaveKeyWithValue("reason", Not(BeEmpty())), HaveKey("next_attempt"))))
		Expect(e.record("u-2").MaintenanceVersion).To(Equal("1.0.0"), "only the instance named")
	})

	DescribeTable("refuses bad parameters with 400 naming the problem, starting nothing",
		func(method, query, want string) {
			a := e.request(method, "/b/upgrades?"+query, "")
			Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
			Expect(a.Body["description"]).To(ContainSubstring(want))
			Expect(e.request("GET", "/b/upgrades", "").Body).To(HaveKeyWithValue("current", BeNil()))
		},
		Entry("canaries not an integer", "POST", "canaries=one", `canaries="one": want an integer`),
		Entry("max_in_flight not an integer", "POST", "max_in_flight=1.5", `max_in_flight="1.5": want an integer`),
		Entry("max_failures empty", "POST", "max_failures=", `max_failures="": want an integer`),
		Entry("attempt_limit given twice", "POST", "attempt_limit=1&attempt_limit=2", "attempt_limit= given 2 times"),
		Entry("canaries out of the Manager's bounds", "POST", "canaries=-1", "canaries must be between 0 and 1000, got -1"),
		Entry("max_in_flight out of the Manager's bounds", "POST", "max_in_flight=0", "max_in_flight must be between 1 and 100, got 0"),
		Entry("max_failures out of the Manager's bounds", "POST", "max_failures=100001", "max_failures must be between 0 and 100000"),
		Entry("attempt_limit out of the Manager's bounds", "POST", "attempt_limit=101", "attempt_limit must be between 1 and 100"),
		Entry("dry_run not a boolean", "POST", "dry_run=maybe", `dry_run="maybe": want true or false`),
		Entry("dry_run given twice", "POST", "dry_run=true&dry_run=false", "dry_run= given 2 times"),
		Entry("a service given twice", "POST", "service=a&service=b", "service= given 2 times"),
		Entry("a plan with a space", "POST", "plan=a%20b", `plan "a b" has a character`),
		Entry("a director with a slash", "POST", "director=a%2Fb", `director "a/b" has a character`),
		Entry("an instance too long", "POST", "instance="+strings.Repeat("x", 256), "instance is longer than 255"),
		Entry("an instance empty", "POST", "instance=a&instance=", "instance is required"),
		Entry("over 100 instances", "POST", strings.Repeat("instance=a&", 100)+"instance=b", "instance= given 101 times: at most 100"),
		Entry("an unknown parameter (a typo that would widen the scope)", "POST", "instances=a", `unknown query parameter "instances"`),
		Entry("instances listed not a number", "GET", "instances=all", `instances="all": want 0 to 10000`),
		Entry("instances listed over the bound", "GET", "instances=10001", `want 0 to 10000`),
		Entry("instances listed given twice", "GET", "instances=1&instances=2", "instances= given 2 times"),
	)

	It("answers another method with 405", func() {
		a := e.request("DELETE", "/b/upgrades", "")
		Expect(a.Status).To(Equal(http.StatusMethodNotAllowed), a.Raw)
	})
})

var _ = Describe("UpgradesHandler", func() {
	It("answers /b/upgrades with 503 when no reconciler is wired", func() {
		rec := httptest.NewRecorder()
		operator.UpgradesHandler(nil, nil).ServeHTTP(rec, httptest.NewRequest("POST", "/b/upgrades", nil))
		Expect(rec.Code).To(Equal(http.StatusServiceUnavailable))
	})
})

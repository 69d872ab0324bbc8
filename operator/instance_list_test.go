package operator_test

import (
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("GET /b/instances", func() {
	var e *env

	BeforeEach(func() {
		e = newEnv()
	})

	It("lists the instances, searched and filtered, a page at a time", func() {
		e.provisioned("r-1", "redis-small")
		e.provisioned("r-2", "redis-small")

		a := e.request("GET", "/b/instances", "")
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		Expect(a.Body).To(HaveKeyWithValue("total", BeEquivalentTo(2)))
		Expect(a.Body).To(HaveKeyWithValue("next", ""))
		first := a.Body["instances"].([]any)[0].(map[string]any)
		Expect(first).To(HaveKeyWithValue("instance_id", "r-1"))
		Expect(first).To(HaveKeyWithValue("deployment", "redis-small-r-1"))
		Expect(first).To(HaveKeyWithValue("plan_id", "redis-small"))
		Expect(first).To(HaveKeyWithValue("organization_guid", "org-1"))
		Expect(first).To(HaveKeyWithValue("state", "ok"))

		a = e.request("GET", "/b/instances?limit=1", "")
		Expect(a.Body["instances"]).To(HaveLen(1))
		Expect(a.Body).To(HaveKeyWithValue("next", "r-1"))
		a = e.request("GET", "/b/instances?limit=1&after=r-1", "")
		Expect(a.Body["instances"].([]any)[0]).To(HaveKeyWithValue("instance_id", "r-2"))
		Expect(a.Body).To(HaveKeyWithValue("next", ""))

		a = e.request("GET", "/b/instances?q=SMALL-R-2", "")
		Expect(a.Body).To(HaveKeyWithValue("total", BeEquivalentTo(1)))
		Expect(e.request("GET", "/b/instances?state=orphaned", "").Body).To(HaveKeyWithValue("total", BeEquivalentTo(0)))
		Expect(e.request("GET", "/b/instances?plan=redis-small&state=ok", "").Body).To(HaveKeyWithValue("total", BeEquivalentTo(2)))
	})

	DescribeTable("answers 400 naming a bad parameter",
		func(query, named string) {
			a := e.request("GET", "/b/instances?"+query, "")
			Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
			Expect(a.Body["description"]).To(ContainSubstring(named))
		},
		Entry("an unknown parameter", "q=x&sort=id", `"sort"`),
		Entry("limit 0", "limit=0", "limit"),
		Entry("limit over 500", "limit=501", "limit"),
		Entry("limit not a number", "limit=ten", "limit"),
		Entry("an unknown state", "state=sleeping", "state"),
		Entry("a repeated parameter", "plan=a&plan=b", "plan"),
		Entry("a search longer than 255", "q="+strings.Repeat("x", 256), "q is longer than 255"),
		Entry("an after longer than 255", "after="+strings.Repeat("x", 256), "after is longer than 255"),
	)

	It("takes no credentials-less request and no other method", func() {
		a := e.send("GET", "/b/instances", "", func(*http.Request) {})
		Expect(a.Status).To(Equal(http.StatusUnauthorized))
		Expect(e.request("POST", "/b/instances", "").Status).To(Equal(http.StatusMethodNotAllowed))
	})
})

package basicauth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/basicauth"
)

var _ = Describe("Require", func() {
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })

	DescribeTable("answers only the given credentials",
		func(set bool, user, pass string, want int) {
			req := httptest.NewRequest("GET", "/b/reconcile", nil)
			if set {
				req.SetBasicAuth(user, pass)
			}
			rec := httptest.NewRecorder()
			basicauth.Require("admin", "pw", next).ServeHTTP(rec, req)
			Expect(rec.Code).To(Equal(want))
			Expect(basicauth.Authorized(req, "admin", "pw")).To(Equal(want == http.StatusTeapot))
			if want == http.StatusUnauthorized {
				Expect(rec.Header().Get("WWW-Authenticate")).To(Equal(`Basic realm="blacksmith"`))
				Expect(rec.Header().Get("Content-Type")).To(Equal("application/json"))
				var body map[string]string
				Expect(json.Unmarshal(rec.Body.Bytes(), &body)).To(Succeed())
				Expect(body).To(Equal(map[string]string{"description": "unauthorized: wrong or missing credentials"}))
			}
		},
		Entry("right user and password", true, "admin", "pw", http.StatusTeapot),
		Entry("wrong password", true, "admin", "wrong", http.StatusUnauthorized),
		Entry("wrong user", true, "root", "pw", http.StatusUnauthorized),
		Entry("a prefix of the password", true, "admin", "p", http.StatusUnauthorized),
		Entry("empty credentials", true, "", "", http.StatusUnauthorized),
		Entry("no Authorization header", false, "", "", http.StatusUnauthorized),
	)
})

var _ = Describe("RequireRole", func() {
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	users := []basicauth.User{{Username: "operator", Password: "op-pw", Role: basicauth.Admin},
		{Username: "auditor", Password: "view-pw", Role: basicauth.Viewer}, {Username: "", Password: "", Role: basicauth.Admin}}

	DescribeTable("lets each user do what its role allows",
		func(method, user, pass string, want int) {
			req := httptest.NewRequest(method, "/b/reconcile", nil)
			if user != "" || pass != "" {
				req.SetBasicAuth(user, pass)
			}
			rec := httptest.NewRecorder()
			basicauth.RequireRole(users, next).ServeHTTP(rec, req)
			Expect(rec.Code).To(Equal(want))
			if want == http.StatusOK {
				Expect(rec.Header().Get(basicauth.RoleHeader)).To(Equal(map[string]string{"operator": "admin", "auditor": "viewer"}[user]))
			}
			if want >= 400 {
				Expect(rec.Header().Get("Content-Type")).To(Equal("application/json"))
				var body map[string]string
				Expect(json.Unmarshal(rec.Body.Bytes(), &body)).To(Succeed())
				Expect(body["description"]).NotTo(BeEmpty())
			}
		},
		Entry("the admin reads", "GET", "operator", "op-pw", http.StatusOK),
		Entry("the admin acts", "POST", "operator", "op-pw", http.StatusOK),
		Entry("the viewer reads", "GET", "auditor", "view-pw", http.StatusOK),
		Entry("the viewer asks for headers", "HEAD", "auditor", "view-pw", http.StatusOK),
		Entry("the viewer may not act", "POST", "auditor", "view-pw", http.StatusForbidden),
		Entry("nor delete", "DELETE", "auditor", "view-pw", http.StatusForbidden),
		Entry("the viewer's name with the admin's password", "POST", "auditor", "op-pw", http.StatusUnauthorized),
		Entry("an unlisted user", "GET", "broker", "broker-pw", http.StatusUnauthorized),
		Entry("empty credentials never match the empty user", "GET", "", "", http.StatusUnauthorized),
		Entry("no Authorization header", "GET", "", "", http.StatusUnauthorized),
	)

	It("names the role of the credentials", func() {
		req := httptest.NewRequest("GET", "/", nil)
		Expect(basicauth.RoleOf(req, users)).To(Equal(basicauth.None))
		req.SetBasicAuth("auditor", "view-pw")
		Expect(basicauth.RoleOf(req, users)).To(Equal(basicauth.Viewer))
		req.SetBasicAuth("operator", "op-pw")
		Expect(basicauth.RoleOf(req, users)).To(Equal(basicauth.Admin))
	})
})

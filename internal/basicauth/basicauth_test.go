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

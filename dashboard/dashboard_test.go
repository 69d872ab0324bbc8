package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/dashboard"
)

func TestDashboard(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "dashboard")
}

var _ = Describe("the dashboard's files", func() {
	get := func(path string) (*http.Response, string) {
		GinkgoHelper()
		rec := httptest.NewRecorder()
		dashboard.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		res := rec.Result()
		body, _ := io.ReadAll(res.Body)
		return res, string(body)
	}

	DescribeTable("are served with a policy that allows no inline script and no other origin",
		func(path, contentType string) {
			res, body := get(path)
			Expect(res.StatusCode).To(Equal(http.StatusOK))
			Expect(res.Header.Get("Content-Type")).To(HavePrefix(contentType))
			Expect(res.Header.Get("Content-Security-Policy")).To(And(ContainSubstring("default-src 'self'"),
				ContainSubstring("script-src 'self'"), ContainSubstring("frame-ancestors 'none'")))
			Expect(res.Header.Get("X-Content-Type-Options")).To(Equal("nosniff"))
			Expect(body).NotTo(BeEmpty())
		},
		Entry("the overview", "/dashboard", "text/html"),
		Entry("an instance page", "/dashboard/instances/some-id", "text/html"),
		Entry("the script", "/dashboard/static/app.js", "text/javascript"),
		Entry("the style", "/dashboard/static/style.css", "text/css"),
	)

	It("has pages whose scripts are all files (no inline script, no remote origin)", func() {
		for _, path := range []string{"/dashboard", "/dashboard/instances/x"} {
			_, body := get(path)
			Expect(regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`).FindString(body)).To(BeEmpty(), path)
			Expect(body).NotTo(MatchRegexp(`(src|href)="(https?:)?//`), path)
		}
	})

	DescribeTable("have their links and files relative to the path they are asked for, to work under a reverse proxy's prefix",
		func(path, up string) {
			_, body := get(path)
			Expect(body).To(ContainSubstring(`<link rel="stylesheet" href="` + up + `dashboard/static/style.css">`))
			Expect(body).To(ContainSubstring(`<script src="` + up + `dashboard/static/app.js" defer></script>`))
			Expect(body).To(ContainSubstring(`<a href="` + up + `dashboard">overview</a>`))
			Expect(body).NotTo(MatchRegexp(`(src|href)="/`), "no path from the origin's root")
		},
		Entry("the overview", "/dashboard", "./"),
		Entry("the overview, with a slash", "/dashboard/", "../"),
		Entry("an instance page", "/dashboard/instances/some-id", "../../"),
		Entry("an instance page whose id has a slash", "/dashboard/instances/a%2Fb", "../../"),
	)

	It("renders every value as text: the script never assigns HTML", func() {
		_, js := get("/dashboard/static/app.js")
		Expect(js).NotTo(MatchRegexp(`innerHTML|outerHTML|insertAdjacentHTML|document\.write`))
	})

	It("answers 404 elsewhere", func() {
		res, _ := get("/dashboard/static/nope.js")
		Expect(res.StatusCode).To(Equal(http.StatusNotFound))
	})
})

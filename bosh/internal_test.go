package bosh

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// fixture reads a Director answer of testdata/director-api (see its README).
func fixture(name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "director-api", name))
	Expect(err).NotTo(HaveOccurred())
	return b
}

var _ = Describe("pure helpers", func() {
	DescribeTable("tokenTimes renews a token before it expires",
		func(expiresIn int, want, life time.Duration) {
			start := time.Unix(1_000_000, 0)
			renew, expires := tokenTimes(start, expiresIn)
			Expect(renew.Sub(start)).To(Equal(want))
			Expect(expires.Sub(start)).To(Equal(life))
		},
		Entry("5 s token: at 80%", 5, 4*time.Second, 5*time.Second),
		Entry("60 s token: at 80%", 60, 48*time.Second, time.Minute),
		Entry("1 h token: 30 s before", 3600, 3570*time.Second, time.Hour),
		Entry("no expires_in: as a 60 s token", 0, 48*time.Second, time.Minute),
	)

	DescribeTable("codeClass",
		func(status int, want string) { Expect(codeClass(status)).To(Equal(want)) },
		Entry("200", 200, "2xx"), Entry("302", 302, "3xx"), Entry("404", 404, "4xx"),
		Entry("500", 500, "5xx"), Entry("no answer", 0, "error"),
	)

	DescribeTable("taskID reads the id from any host's Location",
		func(status int, location string, want int, ok bool) {
			h := http.Header{}
			h.Set("Location", location)
			id, err := taskID(response{status: status, header: h})
			if !ok {
				Expect(err).To(MatchError(errNotTaskRedirect))
				return
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(id).To(Equal(want))
		},
		Entry("foreign host", 302, "https://127.0.0.2:25555/tasks/4711", 4711, true),
		Entry(".invalid host", 302, "https://director.bosh.invalid:25555/tasks/12", 12, true),
		Entry("relative", 303, "/tasks/7", 7, true),
		Entry("not a redirect", 200, "/tasks/7", 0, false),
		Entry("not a task", 302, "https://127.0.0.2:25555/deployments/x", 0, false),
		Entry("bad id", 302, "/tasks/abc", 0, false),
	)

	DescribeTable("untrustedTokenURL: where the client secret may go",
		func(director, token, reason string) {
			base, err := url.Parse(director)
			Expect(err).NotTo(HaveOccurred())
			Expect(untrustedTokenURL(base, token)).To(Equal(reason))
		},
		Entry("https, any host", "https://10.0.0.6:25555", "https://uaa.bosh.invalid:8443/oauth/token", ""),
		Entry("https from a plain-http loopback Director", "http://127.0.0.1:25555", "https://127.0.0.2:8443/oauth/token", ""),
		Entry("the loopback Director's own http address", "http://127.0.0.1:25555", "http://127.0.0.1:25555/oauth/token", ""),
		Entry("the ::1 Director's own http address", "http://[::1]:25555", "http://[::1]:25555/oauth/token", ""),
		Entry("the localhost Director's own http address", "http://localhost:25555", "http://localhost:25555/oauth/token", ""),
		Entry("http, another loopback host", "http://127.0.0.1:25555", "http://127.0.0.2:25555/oauth/token",
			"the token URL must be https, or plain http toward the Director's own loopback address 127.0.0.1:25555"),
		Entry("http, another port", "http://127.0.0.1:25555", "http://127.0.0.1:8080/oauth/token",
			"the token URL must be https, or plain http toward the Director's own loopback address 127.0.0.1:25555"),
		Entry("http, the same host by another name", "http://127.0.0.1:25555", "http://localhost:25555/oauth/token",
			"the token URL must be https, or plain http toward the Director's own loopback address 127.0.0.1:25555"),
		Entry("http, a user@ that hides the host", "http://127.0.0.1:25555", "http://127.0.0.1:25555@uaa.bosh.invalid/oauth/token",
			"the token URL must be https, or plain http toward the Director's own loopback address 127.0.0.1:25555"),
		Entry("http from an https Director", "https://127.0.0.1:25555", "http://127.0.0.1:25555/oauth/token", "the token URL must be https"),
		Entry("http from a non-loopback http Director", "http://10.0.0.6:25555", "http://10.0.0.6:25555/oauth/token", "the token URL must be https"),
		Entry("another scheme", "https://10.0.0.6:25555", "ftp://uaa.bosh.invalid/oauth/token", "the token URL must be https"),
		Entry("no scheme", "https://10.0.0.6:25555", "uaa.bosh.invalid:8443/oauth/token", "the token URL must be https"),
		Entry("no host", "https://10.0.0.6:25555", "https://:8443/oauth/token", "it names no host"),
		Entry("not a URL", "https://10.0.0.6:25555", "https://uaa\x00/oauth/token", "it is not a URL"),
	)

	DescribeTable("shorten cuts long texts at a rune boundary",
		func(text string, want int) {
			got := shorten(text)
			Expect(got).To(HaveLen(want))
			Expect(utf8.ValidString(got)).To(BeTrue())
		},
		Entry("short: kept", "Bad credentials", 15),
		Entry("at the bound: kept", strings.Repeat("x", maxErrorText), maxErrorText),
		Entry("ASCII: cut to the bound", strings.Repeat("x", 600), maxErrorText),
		Entry("2-byte runes: cut to the bound", strings.Repeat("é", 300), maxErrorText-1),
		Entry("3-byte runes: cut before the bound", strings.Repeat("€", 200), maxErrorText-2),
	)

	It("parses the Director's JSON errors into sentinel-matching APIErrors", func() {
		notFound := parseAPIError("lab", "GET", "/deployments/x", 404, fixture("error_deployment_not_found_404.json"))
		Expect(notFound.Code).To(Equal(70000))
		Expect(errors.Is(notFound, ErrDeploymentNotFound)).To(BeTrue())
		Expect(errors.Is(notFound, ErrTaskNotFound)).To(BeFalse())
		Expect(notFound.Error()).To(ContainSubstring(`bosh director "lab": GET /deployments/x: status 404, code 70000: Deployment 'service-instance_does-not-exist' doesn't exist`))

		task := parseAPIError("lab", "GET", "/tasks/999999", 404, fixture("error_task_not_found_404.json"))
		Expect(errors.Is(task, ErrTaskNotFound)).To(BeTrue())

		scope := parseAPIError("lab", "GET", "/deployments", 401, fixture("error_unauthorized_scope_401.json"))
		Expect(scope.Code).To(Equal(600000))
		Expect(errors.Is(scope, ErrUnauthorized)).To(BeTrue())
	})

	It("keeps a plain-text error body as the description", func() {
		e := parseAPIError("lab", "GET", "/deployments", 401, []byte("Not authorized: '/deployments'\n"))
		Expect(e.Code).To(BeZero())
		Expect(e.Description).To(Equal("Not authorized: '/deployments'"))
		Expect(errors.Is(e, ErrUnauthorized)).To(BeTrue())
	})

	It("decodes the fixtures' VMs and instances, null and ISO 8601 fields included", func() {
		var vms []VM
		Expect(json.Unmarshal(fixture("deployment_vms.json"), &vms)).To(Succeed())
		Expect(vms).To(Equal([]VM{{
			AgentID: "c5e7c705-459e-41c0-b640-db32d8dc6e71", CID: "vm-ec974048-3352-4ba4-669d-beab87b16bcb",
			Job: "redis", Index: 0, ID: "209b96c8-e482-43c7-9f3e-04de9f93c535", AZ: "z1",
			IPs: []string{"10.0.16.5"}, VMCreatedAt: time.Date(2026, 7, 1, 10, 11, 12, 0, time.UTC).Unix(), Active: true,
		}}))

		var instances []Instance
		Expect(json.Unmarshal(fixture("deployment_instances.json"), &instances)).To(Succeed())
		Expect(instances).To(HaveLen(2))
		Expect(instances[1]).To(Equal(Instance{
			Job: "smoke-tests", ID: "548d6aa0-eb8f-4890-bd3a-e6b526f3aeea", AZ: "z1", IPs: []string{}, ExpectsVM: false,
		}))
	})

	It("decodes tasks with null fields and task events with error lines", func() {
		var t Task
		Expect(json.Unmarshal(fixture("task_queued.json"), &t)).To(Succeed())
		Expect(t).To(Equal(Task{ID: 4711, State: "queued", Description: "create deployment", User: "broker-client",
			Deployment: "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b"}))

		events, err := parseEvents(append(fixture("task_4711_output_event.ndjson"), fixture("task_event_error_line.json")...))
		Expect(err).NotTo(HaveOccurred())
		Expect(events).To(HaveLen(11))
		Expect(events[8].Tags).To(Equal([]string{"redis"}))
		Expect(events[10].Error.Code).To(Equal(100))
	})
})

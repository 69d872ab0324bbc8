package bosh_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// call is one client call whose answer is checked.
type call func(context.Context, *bosh.Client) error

var (
	getInfo        call = func(ctx context.Context, c *bosh.Client) error { _, err := c.Info(ctx); return err }
	getDeployments call = func(ctx context.Context, c *bosh.Client) error { _, err := c.Deployments(ctx); return err }
	getManifest    call = func(ctx context.Context, c *bosh.Client) error { _, err := c.Manifest(ctx, "big"); return err }
	getVMs         call = func(ctx context.Context, c *bosh.Client) error { _, err := c.VMs(ctx, "big"); return err }
	getTask        call = func(ctx context.Context, c *bosh.Client) error { _, err := c.Task(ctx, 1); return err }
	getReleases    call = func(ctx context.Context, c *bosh.Client) error { _, err := c.Releases(ctx); return err }
	getStemcells   call = func(ctx context.Context, c *bosh.Client) error { _, err := c.Stemcells(ctx); return err }
)

// endless answers status with a JSON array of item that never ends, until
// the client hangs up.
func endless(status int, item string) http.HandlerFunc {
	chunk := []byte(strings.Repeat(item+",", 64<<10/(len(item)+1)))
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte("["))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
}

// manifestOfSize answers GET /deployments/:name with a manifest answer of
// exactly size bytes, declaring its length when declare is set.
func manifestOfSize(size int, declare bool) http.HandlerFunc {
	body := `{"manifest":"` + strings.Repeat("x", size-len(`{"manifest":""}`)) + `"}`
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if declare {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		_, _ = w.Write([]byte(body))
	}
}

// fakeDirector starts a fake Director on 127.0.0.1 answering route with
// handler; its /info says basic auth, or, with uaa, a UAA at its own address
// (plain http, accepted because it is the Director's own loopback address).
func fakeDirector(uaa bool, route string, handler http.HandlerFunc) *bosh.Client {
	GinkgoHelper()
	info := func(w http.ResponseWriter, r *http.Request) {
		auth := `{"type":"basic","options":{}}`
		if uaa {
			auth = fmt.Sprintf(`{"type":"uaa","options":{"url":"http://%s"}}`, r.Host)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"name":"fake","user_authentication":%s}`, auth)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(route, handler)
	if route != "GET /info" {
		mux.HandleFunc("GET /info", info)
	}
	srv, _ := fakeServer("127.0.0.1:0", mux)
	c, err := bosh.New(bosh.Options{Name: "fake", Address: srv.URL, Username: "admin", Password: "admin",
		ClientID: "blacksmith", ClientSecret: "secret", Timeout: 20 * time.Second,
		Logger: slog.New(slog.NewTextHandler(GinkgoWriter, nil))})
	Expect(err).NotTo(HaveOccurred())
	return c
}

var _ = Describe("Answers of bounded size", func() {
	DescribeTable("refuses an answer over its bound without reading it whole",
		func(do call, uaa bool, route string, handler http.HandlerFunc, message string) {
			c := fakeDirector(uaa, route, handler)
			start := time.Now()
			err := do(ctxFor(30*time.Second), c)
			Expect(err).To(MatchError(bosh.ErrAnswerTooLarge))
			Expect(err).To(MatchError(ContainSubstring(`bosh director "fake"`)))
			Expect(err).To(MatchError(ContainSubstring(message)))
			Expect(time.Since(start)).To(BeNumerically("<", 10*time.Second), "an endless answer was read until the timeout")
		},
		Entry("an endless deployments listing", getDeployments, false, "GET /deployments",
			endless(200, `{"name":"redis-x","teams":[],"releases":[{"name":"redis","version":"16.1.0"}],"locked":false}`),
			"the Director's answer to GET /deployments is over 32 MiB"),
		Entry("an endless releases listing", getReleases, false, "GET /releases",
			endless(200, `{"name":"redis","release_versions":[{"version":"16.1.0","job_names":["redis"]}]}`),
			"the Director's answer to GET /releases is over 32 MiB"),
		Entry("an endless stemcells listing", getStemcells, false, "GET /stemcells",
			endless(200, `{"name":"s","operating_system":"ubuntu-jammy","version":"1.506","deployments":[{"name":"redis-x"}]}`),
			"the Director's answer to GET /stemcells is over 32 MiB"),
		Entry("an endless /info", getInfo, false, "GET /info", endless(200, `{"name":"x"}`),
			"the Director's answer to GET /info is over 1 MiB"),
		Entry("a manifest answer one byte over 16 MiB", getManifest, false, "GET /deployments/big",
			manifestOfSize(16<<20+1, false), "the Director's answer to GET /deployments/:name is over 16 MiB"),
		Entry("a declared length over the bound", getTask, false, "GET /tasks/1",
			manifestOfSize(2<<20, true), "the Director's answer to GET /tasks/:id is over 1 MiB"),
		Entry("an endless error answer", getVMs, false, "GET /deployments/big/vms", endless(500, `"Internal Server Error"`),
			"the Director's answer to GET /deployments/:name/vms is over 32 MiB"),
		Entry("an endless UAA token answer", getDeployments, true, "POST /oauth/token", endless(200, `{"access_token":"x"}`),
			"UAA's answer to POST /oauth/token is over 1 MiB"),
	)

	It("reads a manifest answer of exactly 16 MiB", func() {
		c := fakeDirector(false, "GET /deployments/big", manifestOfSize(16<<20, true))
		m, err := c.Manifest(ctxFor(30*time.Second), "big")
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(HaveLen(16<<20 - len(`{"manifest":""}`)))
	})
})

package sim_test

import (
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

var _ = Describe("the root document and authentication", func() {
	It("links the v3 API and the UAA with absolute hrefs, without auth", func() {
		cc := start(sim.Options{})
		status, body := get(cc, "/", "")
		Expect(status).To(Equal(http.StatusOK))
		links := body["links"].(map[string]any)
		Expect(links["self"]).To(Equal(map[string]any{"href": cc.URL()}))
		Expect(links["cloud_controller_v3"]).To(HaveKeyWithValue("href", cc.URL()+"/v3"))
		Expect(links["uaa"]).To(Equal(map[string]any{"href": cc.UAAURL()}))
		Expect(links["login"]).To(HaveKeyWithValue("href", HavePrefix(cc.URL())))
	})

	It("issues a bearer token with expires_in the token TTL, and refuses bad credentials as UAA does", func() {
		cc := start(sim.Options{ClientID: "me", ClientSecret: "pw", TokenTTL: 90 * time.Second})
		status, body := token(cc, "me", "pw")
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(HaveKeyWithValue("token_type", "bearer"))
		Expect(body).To(HaveKeyWithValue("expires_in", BeNumerically("==", 90)))
		Expect(body["access_token"]).NotTo(BeEmpty())

		status, body = token(cc, "me", "wrong")
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(body).To(Equal(map[string]any{"error": "unauthorized", "error_description": "Bad credentials"}))
	})

	It("answers a missing token CF-NotAuthenticated and an unknown one CF-InvalidAuthToken", func() {
		cc := start(sim.Options{})
		status, body := get(cc, "/v3/service_instances", "")
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(cfError(body)).To(Equal(map[string]any{"code": 10002.0, "title": "CF-NotAuthenticated", "detail": "Authentication error"}))

		status, body = get(cc, "/v3/service_instances", "not-a-token")
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(cfError(body)).To(Equal(map[string]any{"code": 1000.0, "title": "CF-InvalidAuthToken", "detail": "Invalid Auth Token"}))
	})

	It("refuses a token once it has expired, and every token once revoked", func() {
		cc := start(sim.Options{TokenTTL: time.Second})
		tok := mustToken(cc)
		status, _ := get(cc, "/v3/service_brokers", tok)
		Expect(status).To(Equal(http.StatusOK))
		Eventually(func() int { s, _ := get(cc, "/v3/service_brokers", tok); return s }, 3*time.Second, 50*time.Millisecond).
			Should(Equal(http.StatusUnauthorized))
		_, body := get(cc, "/v3/service_brokers", tok)
		Expect(cfError(body)["title"]).To(Equal("CF-InvalidAuthToken"))

		cc.Knobs().SetTokenTTL(time.Hour)
		tok = mustToken(cc)
		cc.RevokeTokens()
		status, _ = get(cc, "/v3/service_brokers", tok)
		Expect(status).To(Equal(http.StatusUnauthorized))
	})

	It("refuses to listen anywhere but loopback", func() {
		_, err := sim.New(sim.Options{Addr: "0.0.0.0:0"})
		Expect(err).To(MatchError(sim.ErrBadOptions))
	})

	It("bounds request bodies", func() {
		cc := start(sim.Options{})
		req, _ := http.NewRequest("POST", cc.UAAURL()+"/oauth/token", strings.NewReader("grant_type="+strings.Repeat("x", 1<<20)))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(sim.DefaultClientID, sim.DefaultClientSecret)
		status, _ := do(req)
		Expect(status).To(Equal(http.StatusBadRequest))
	})
})

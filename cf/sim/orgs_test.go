package sim_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

// claimsOf decodes a JWT's payload, unverified, as the cf CLI reads it.
func claimsOf(tok string) map[string]any {
	GinkgoHelper()
	parts := strings.Split(tok, ".")
	Expect(parts).To(HaveLen(3), "a JWT: header.payload.signature")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	Expect(err).NotTo(HaveOccurred())
	var c map[string]any
	Expect(json.Unmarshal(raw, &c)).To(Succeed())
	return c
}

var _ = Describe("tokens as the cf CLI reads them", func() {
	It("are JWTs naming the client, with the expiry the answer gives", func() {
		cc := start(sim.Options{TokenTTL: 90 * time.Second})
		before := time.Now().Unix()
		status, body := token(cc, sim.DefaultClientID, sim.DefaultClientSecret)
		Expect(status).To(Equal(http.StatusOK))
		c := claimsOf(body["access_token"].(string))
		Expect(c["client_id"]).To(Equal(sim.DefaultClientID))
		Expect(c["grant_type"]).To(Equal("client_credentials"))
		Expect(c["jti"]).To(Equal(body["jti"]))
		Expect(c["exp"]).To(BeNumerically("~", float64(before+90), 2))
		Expect(c["iss"]).To(Equal(cc.URL() + sim.UAAPrefix + "/oauth/token"))
		Expect(body["expires_in"]).To(BeEquivalentTo(90))
	})

	It("are issued where the root document's login link says, and work on /v3", func() {
		cc := start(sim.Options{})
		_, root := get(cc, "/", "")
		login := root["links"].(map[string]any)["login"].(map[string]any)["href"].(string)
		req, err := http.NewRequest("POST", login+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(sim.DefaultClientID, sim.DefaultClientSecret)
		status, body := do(req)
		Expect(status).To(Equal(http.StatusOK))
		status, _ = get(cc, "/v3/organizations", body["access_token"].(string))
		Expect(status).To(Equal(http.StatusOK))
	})

	It("are refused once tampered with, signed or not", func() {
		cc := start(sim.Options{})
		tok := mustToken(cc)
		parts := strings.Split(tok, ".")
		forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"client_id":"admin","exp":9999999999}`)) + "." + parts[2]
		status, body := get(cc, "/v3/organizations", forged)
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(cfError(body)["title"]).To(Equal("CF-InvalidAuthToken"))
	})
})

var _ = Describe("organizations and spaces", func() {
	var f *fixture
	BeforeEach(func() { f = newFixture() })

	It("lists the organizations, by name and guid, in the order asked", func() {
		status, body := get(f.cc, "/v3/organizations", f.tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(guids(body)).To(Equal([]string{f.org1.GUID, f.org2.GUID}))
		org := body["resources"].([]any)[0].(map[string]any)
		Expect(org["name"]).To(Equal("org-1"))
		Expect(org["suspended"]).To(BeFalse())
		Expect(org["links"].(map[string]any)["self"]).To(Equal(map[string]any{"href": f.cc.URL() + "/v3/organizations/" + f.org1.GUID}))
		_, body = get(f.cc, "/v3/organizations?names=org-2", f.tok)
		Expect(guids(body)).To(Equal([]string{f.org2.GUID}))
		_, body = get(f.cc, "/v3/organizations?order_by=-name", f.tok)
		Expect(guids(body)).To(Equal([]string{f.org2.GUID, f.org1.GUID}))
		status, body = get(f.cc, "/v3/organizations?order_by=size", f.tok)
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(cfError(body)["detail"]).To(ContainSubstring("Order by can only be: 'created_at', 'updated_at', 'name'"))
	})

	It("lists the spaces of an organization, and gets each by guid", func() {
		_, body := get(f.cc, "/v3/spaces?organization_guids="+f.org2.GUID, f.tok)
		Expect(guids(body)).To(Equal([]string{f.space2.GUID}))
		space := body["resources"].([]any)[0].(map[string]any)
		Expect(space["relationships"]).To(Equal(map[string]any{
			"organization": map[string]any{"data": map[string]any{"guid": f.org2.GUID}},
			"quota":        map[string]any{"data": nil},
		}))
		_, body = get(f.cc, "/v3/spaces?names=space-1&organization_guids="+f.org1.GUID+","+f.org2.GUID, f.tok)
		Expect(guids(body)).To(Equal([]string{f.space1.GUID}))
		status, body := get(f.cc, "/v3/spaces/"+f.space1.GUID, f.tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body["name"]).To(Equal("space-1"))
		status, body = get(f.cc, "/v3/organizations/nope", f.tok)
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(cfError(body)["detail"]).To(Equal("Organization not found"))
		status, _ = get(f.cc, "/v3/spaces", "")
		Expect(status).To(Equal(http.StatusUnauthorized), "not the marketplace: a token is needed")
	})
})

var _ = Describe("the marketplace without a token", func() {
	It("answers anyone, as the Cloud Controller does by default", func() {
		f := newFixture()
		status, body := get(f.cc, "/v3/service_plans", "")
		Expect(status).To(Equal(http.StatusOK))
		Expect(guids(body)).To(HaveLen(3))
		status, _ = get(f.cc, "/v3/service_offerings", "")
		Expect(status).To(Equal(http.StatusOK))
		status, body = get(f.cc, "/v3/service_plans", "not-a-token")
		Expect(status).To(Equal(http.StatusUnauthorized), "a bad token is still refused")
		Expect(cfError(body)["title"]).To(Equal("CF-InvalidAuthToken"))
	})

	It("is refused with hide_marketplace_from_unauthenticated_users", func() {
		cc := start(sim.Options{HideMarketplace: true})
		status, body := get(cc, "/v3/service_plans", "")
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(cfError(body)["title"]).To(Equal("CF-NotAuthenticated"))
	})
})

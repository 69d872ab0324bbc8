package sim_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

// tokenReply posts a client-credentials request with basic auth.
func tokenReply(c *client, id, secret, grant string) reply {
	cl := *c
	cl.user, cl.pass, cl.bearer, cl.contentType = id, secret, "", "application/x-www-form-urlencoded"
	return cl.do(http.MethodPost, "/oauth/token", []byte(url.Values{"grant_type": {grant}}.Encode()))
}

// token fetches a token and expects success.
func token(c *client, id, secret string) map[string]any {
	r := tokenReply(c, id, secret, "client_credentials")
	ExpectWithOffset(1, r.status).To(Equal(http.StatusOK), "%s", r.body)
	var v map[string]any
	ExpectWithOffset(1, json.Unmarshal(r.body, &v)).To(Succeed())
	return v
}

var _ = Describe("UAA mode", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{Auth: sim.AuthUAA, TokenTTL: time.Second, TaskDuration: 10 * time.Millisecond})
		c = newClient(d).anonymous()
	})

	It("advertises its own token endpoint in /info", func() {
		in := c.getJSON("/info").(map[string]any)
		expectShape(in, fixture("info_uaa.json"))
		Expect(in["user_authentication"]).To(Equal(map[string]any{"type": "uaa",
			"options": map[string]any{"url": d.URL(), "urls": []any{d.URL()}}}))
	})

	It("issues client-credential tokens that the Director accepts, and reports the client as user", func() {
		t := token(c, "blacksmith", "secret")
		Expect(t).To(HaveKeyWithValue("token_type", "bearer"))
		Expect(t).To(HaveKeyWithValue("expires_in", 1.0))
		Expect(t).To(HaveKeyWithValue("scope", "bosh.admin"))
		Expect(t).To(HaveKey("jti"))
		c.bearer = t["access_token"].(string)
		Expect(c.get("/deployments").status).To(Equal(http.StatusOK))
		Expect(c.getJSON("/info").(map[string]any)["user"]).To(Equal("blacksmith"))
		Expect(c.waitTask(c.deploy(redisManifest("r1", "1")))["user"]).To(Equal("blacksmith"))
		Expect(d.Stats().Tokens).To(Equal(1))
	})

	It("takes the client credentials from the form too", func() {
		cl := *c
		cl.contentType = "application/x-www-form-urlencoded"
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"blacksmith"}, "client_secret": {"secret"}}
		Expect(cl.do(http.MethodPost, "/oauth/token", []byte(form.Encode())).status).To(Equal(http.StatusOK))
	})

	It("refuses bad client credentials and other grants", func() {
		r := tokenReply(c, "blacksmith", "wrong", "client_credentials")
		Expect(r.status).To(Equal(http.StatusUnauthorized))
		Expect(r.json()).To(HaveKeyWithValue("error", "unauthorized"))
		r = tokenReply(c, "blacksmith", "secret", "password")
		Expect(r.status).To(Equal(http.StatusUnauthorized))
		Expect(r.json()).To(HaveKeyWithValue("error", "invalid_client"))
	})

	It("refuses basic auth, forged and expired tokens with the plain-text 401", func() {
		basic := newClient(d)
		Expect(basic.get("/deployments").status).To(Equal(http.StatusUnauthorized))
		good := token(c, "blacksmith", "secret")["access_token"].(string)
		c.bearer = good[:len(good)-2] + "AA"
		Expect(string(c.get("/deployments").body)).To(Equal("Not authorized: '/deployments'\n"))

		c.bearer = good
		Expect(c.get("/deployments").status).To(Equal(http.StatusOK))
		Eventually(func() int { return c.get("/deployments").status }).WithTimeout(4*time.Second).
			Should(Equal(http.StatusUnauthorized), "the token outlives its expires_in by less than a second")
	})

	It("changes the lifetime of new tokens at run time", func() {
		d.Knobs().SetTokenTTL(90 * time.Second)
		Expect(token(c, "blacksmith", "secret")).To(HaveKeyWithValue("expires_in", 90.0))
	})

	It("refuses every token issued before RevokeTokens", func() {
		c.bearer = token(c, "blacksmith", "secret")["access_token"].(string)
		d.Knobs().SetTokenTTL(time.Hour)
		d.RevokeTokens()
		Expect(c.get("/deployments").status).To(Equal(http.StatusUnauthorized))
		c.bearer = token(c, "blacksmith", "secret")["access_token"].(string)
		Expect(c.get("/deployments").status).To(Equal(http.StatusOK))
	})

	It("lets a bosh.read client read but not write", func() {
		ro := start(sim.Options{Auth: sim.AuthUAA, ClientScopes: []string{"bosh.read"}})
		rc := newClient(ro).anonymous()
		rc.bearer = token(rc, "blacksmith", "secret")["access_token"].(string)
		Expect(rc.get("/deployments").status).To(Equal(http.StatusOK))
		r := rc.do(http.MethodPost, "/deployments", []byte(redisManifest("r1", "1")))
		Expect(r.status).To(Equal(http.StatusUnauthorized))
		uuid := rc.getJSON("/info").(map[string]any)["uuid"].(string)
		Expect(r.json()).To(Equal(map[string]any{"code": 600000.0,
			"description": "Require one of the scopes: bosh.admin, bosh." + uuid + ".admin"}))
	})

	It("serves no token endpoint in basic mode", func() {
		b := start(sim.Options{})
		Expect(strings.TrimSpace(string(tokenReply(newClient(b), "blacksmith", "secret", "client_credentials").body))).
			To(Equal("Endpoint '/oauth/token' not found."))
	})
})

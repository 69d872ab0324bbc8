package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ccsim "github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

// ccCall sends a v3 request to the Cloud Controller simulator with token
// tok and returns the answer's status, Location header and JSON body.
func ccCall(cc *ccsim.CC, tok, method, path string, body any) (int, string, map[string]any) {
	GinkgoHelper()
	var in io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		Expect(err).NotTo(HaveOccurred())
		in = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, cc.URL()+path, in)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	var out map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		Expect(json.Unmarshal(raw, &out)).To(Succeed(), string(raw))
	}
	return res.StatusCode, res.Header.Get("Location"), out
}

// ccToken is a client-credentials token of the simulator's UAA.
func ccToken(cc *ccsim.CC) string {
	GinkgoHelper()
	req, err := http.NewRequest("POST", cc.UAAURL()+"/oauth/token", bytes.NewReader([]byte("grant_type=client_credentials")))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(ccsim.DefaultClientID, ccsim.DefaultClientSecret)
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	var body map[string]any
	Expect(json.NewDecoder(res.Body).Decode(&body)).To(Succeed())
	return body["access_token"].(string)
}

// jobEnds waits for the job at location to end, and returns its state.
func jobEnds(cc *ccsim.CC, tok, location string) string {
	GinkgoHelper()
	Expect(location).To(HavePrefix(cc.URL() + "/v3/jobs/"))
	var state string
	Eventually(func() string {
		_, _, job := ccCall(cc, tok, "GET", location[len(cc.URL()):], nil)
		state, _ = job["state"].(string)
		return state
	}).WithTimeout(60 * time.Second).WithPolling(100 * time.Millisecond).ShouldNot(Equal("PROCESSING"))
	return state
}

var _ = Describe("the platform drives the daemon, as a CF user's commands do", func() {
	It("registers the daemon as a broker, provisions an instance through it, binds and unbinds a key, deprovisions it", func() {
		d := startDaemon("")
		cc, err := ccsim.New(ccsim.Options{PollInterval: 200 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cc.Close)
		space, err := cc.Foundation().AddSpace(cc.Foundation().AddOrg("org").GUID, "space")
		Expect(err).NotTo(HaveOccurred())
		tok := ccToken(cc)

		status, location, body := ccCall(cc, tok, "POST", "/v3/service_brokers", map[string]any{
			"name": "daemon", "url": d.url,
			"authentication": map[string]any{"type": "basic", "credentials": map[string]any{"username": brokerUser, "password": brokerPass}},
		})
		Expect(status).To(Equal(http.StatusAccepted), "%v", body)
		Expect(jobEnds(cc, tok, location)).To(Equal("COMPLETE"), "the daemon's catalog fetched")
		var plan string
		for _, p := range cc.Foundation().Plans() {
			if p.CatalogID == "redis-small" {
				plan = p.GUID
			}
		}
		Expect(plan).NotTo(BeEmpty(), "the daemon's plans are the platform's")

		status, location, body = ccCall(cc, tok, "POST", "/v3/service_instances", map[string]any{
			"type": "managed", "name": "made-by-the-platform",
			"relationships": map[string]any{"space": map[string]any{"data": map[string]any{"guid": space.GUID}},
				"service_plan": map[string]any{"data": map[string]any{"guid": plan}}},
		})
		Expect(status).To(Equal(http.StatusAccepted), "%v", body)
		Expect(jobEnds(cc, tok, location)).To(Equal("COMPLETE"), "the daemon provisioned it")
		_, _, list := ccCall(cc, tok, "GET", "/v3/service_instances?names=made-by-the-platform", nil)
		resources, _ := list["resources"].([]any)
		Expect(resources).To(HaveLen(1))
		guid := resources[0].(map[string]any)["guid"].(string)
		in, _ := cc.Foundation().Instance(guid)
		Expect(in.LastOperation.State).To(Equal(ccsim.StateSucceeded))
		code, view := d.get("/b/instances/"+guid, opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), view)
		Expect(view).To(ContainSubstring(`"plan_id": "redis-small"`))

		status, location, body = ccCall(cc, tok, "POST", "/v3/service_credential_bindings", map[string]any{
			"type": "key", "name": "key-1",
			"relationships": map[string]any{"service_instance": map[string]any{"data": map[string]any{"guid": guid}}},
		})
		Expect(status).To(Equal(http.StatusAccepted), "%v", body)
		Expect(jobEnds(cc, tok, location)).To(Equal("COMPLETE"), "the daemon bound a key")
		_, _, keys := ccCall(cc, tok, "GET", "/v3/service_credential_bindings?service_instance_guids="+guid, nil)
		keyList, _ := keys["resources"].([]any)
		Expect(keyList).To(HaveLen(1))
		key := keyList[0].(map[string]any)["guid"].(string)
		status, _, details := ccCall(cc, tok, "GET", "/v3/service_credential_bindings/"+key+"/details", nil)
		Expect(status).To(Equal(http.StatusOK))
		Expect(details["credentials"]).To(HaveKey("password"), "the credentials the daemon rendered")
		status, location, body = ccCall(cc, tok, "DELETE", "/v3/service_credential_bindings/"+key, nil)
		Expect(status).To(Equal(http.StatusAccepted), "%v", body)
		Expect(jobEnds(cc, tok, location)).To(Equal("COMPLETE"), "the daemon unbound the key")

		status, location, body = ccCall(cc, tok, "DELETE", "/v3/service_instances/"+guid, nil)
		Expect(status).To(Equal(http.StatusAccepted), "%v", body)
		Expect(jobEnds(cc, tok, location)).To(Equal("COMPLETE"), "the daemon deprovisioned it")
		_, found := cc.Foundation().Instance(guid)
		Expect(found).To(BeFalse())
		status, _ = d.get("/v2/service_instances/"+guid+"/last_operation", brokerUser, brokerPass)
		Expect(status).To(Or(Equal(http.StatusGone), Equal(http.StatusOK)), "deprovisioned: remembered, then gone")
	})
})

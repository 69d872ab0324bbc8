package sim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

// start runs a simulator for the spec.
func start(opts sim.Options) *sim.CC {
	cc, err := sim.New(opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cc.Close)
	return cc
}

// token gets an access token from the simulator's UAA.
func token(cc *sim.CC, id, secret string) (int, map[string]any) {
	req, err := http.NewRequest("POST", cc.UAAURL()+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	return do(req)
}

func mustToken(cc *sim.CC) string {
	status, body := token(cc, sim.DefaultClientID, sim.DefaultClientSecret)
	Expect(status).To(Equal(http.StatusOK))
	return body["access_token"].(string)
}

// get fetches a URL (absolute, or a path of the simulator) with a token ("" = none).
func get(cc *sim.CC, target, tok string) (int, map[string]any) {
	if strings.HasPrefix(target, "/") {
		target = cc.URL() + target
	}
	req, err := http.NewRequest("GET", target, nil)
	Expect(err).NotTo(HaveOccurred())
	if tok != "" {
		req.Header.Set("Authorization", "bearer "+tok)
	}
	return do(req)
}

func do(req *http.Request) (int, map[string]any) {
	GinkgoHelper()
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	var body map[string]any
	if len(raw) > 0 {
		Expect(json.Unmarshal(raw, &body)).To(Succeed(), string(raw))
	}
	return res.StatusCode, body
}

// cfError is the first error of a CF error object.
func cfError(body map[string]any) map[string]any {
	errs, ok := body["errors"].([]any)
	Expect(ok).To(BeTrue(), "no errors in %v", body)
	Expect(errs).To(HaveLen(1))
	return errs[0].(map[string]any)
}

// guids lists the guids of a list's resources.
func guids(body map[string]any) []string {
	var out []string
	for _, r := range body["resources"].([]any) {
		out = append(out, r.(map[string]any)["guid"].(string))
	}
	return out
}

func pag(body map[string]any) map[string]any { return body["pagination"].(map[string]any) }

// fixture is a small CF: one broker with two plans, two orgs and spaces,
// three managed instances and a user-provided one.
type fixture struct {
	cc              *sim.CC
	tok             string
	broker          sim.Broker
	offering        sim.Offering
	small, large    sim.Plan
	org1, org2      sim.Org
	space1, space2  sim.Space
	i1, i2, i3, ups sim.Instance
	otherBroker     sim.Broker
	otherPlan       sim.Plan
}

func newFixture() *fixture {
	f := &fixture{cc: start(sim.Options{})}
	cc := f.cc
	var err error
	f.broker = cc.Foundation().AddBroker("blacksmith")
	f.offering, err = cc.Foundation().AddOffering(f.broker.GUID, "redis", "redis")
	Expect(err).NotTo(HaveOccurred())
	f.small, err = cc.Foundation().AddPlan(f.offering.GUID, "redis-small", "small", "1.0.0")
	Expect(err).NotTo(HaveOccurred())
	f.large, err = cc.Foundation().AddPlan(f.offering.GUID, "redis-large", "large", "")
	Expect(err).NotTo(HaveOccurred())
	f.otherBroker = cc.Foundation().AddBroker("other")
	o, err := cc.Foundation().AddOffering(f.otherBroker.GUID, "mysql", "mysql")
	Expect(err).NotTo(HaveOccurred())
	f.otherPlan, err = cc.Foundation().AddPlan(o.GUID, "mysql-db", "db", "")
	Expect(err).NotTo(HaveOccurred())
	f.org1, f.org2 = cc.Foundation().AddOrg("org-1"), cc.Foundation().AddOrg("org-2")
	f.space1, err = cc.Foundation().AddSpace(f.org1.GUID, "space-1")
	Expect(err).NotTo(HaveOccurred())
	f.space2, err = cc.Foundation().AddSpace(f.org2.GUID, "space-2")
	Expect(err).NotTo(HaveOccurred())
	ok := sim.LastOperation{Type: sim.OpCreate, State: sim.StateSucceeded, Description: "done"}
	f.i1, err = cc.Foundation().AddInstance("guid-1", "one", f.small.GUID, f.space1.GUID, ok)
	Expect(err).NotTo(HaveOccurred())
	f.i2, err = cc.Foundation().AddInstance("guid-2", "two", f.large.GUID, f.space2.GUID,
		sim.LastOperation{Type: sim.OpUpdate, State: sim.StateInProgress, Description: "upgrading"})
	Expect(err).NotTo(HaveOccurred())
	f.i3, err = cc.Foundation().AddInstance("guid-3", "three", f.otherPlan.GUID, f.space1.GUID, ok)
	Expect(err).NotTo(HaveOccurred())
	f.ups, err = cc.Foundation().AddUserProvidedInstance("guid-ups", "ups", f.space2.GUID)
	Expect(err).NotTo(HaveOccurred())
	f.tok = mustToken(cc)
	return f
}

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	osb "sigs.k8s.io/go-open-service-broker-client/v2"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	ccsim "github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

// errandPlatform is a Cloud Controller simulator with orgs alpha and beta,
// the errands' configuration naming it (broker_name blacksmith) and the
// errand's own client in the environment.
type errandPlatform struct {
	cc     *ccsim.CC
	config string
	env    []string
	cf     *cf.Client
	admin  *cf.Admin
}

func newErrandPlatform() *errandPlatform {
	GinkgoHelper()
	cc, err := ccsim.New(ccsim.Options{PollInterval: 200 * time.Millisecond})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cc.Close)
	cc.Foundation().AddOrg("alpha")
	cc.Foundation().AddOrg("beta")
	config := writeConfig(freeAddr(), vaultServer.Addr, fmt.Sprintf("cf:\n  api: %s\n  client_id: reader\n  client_secret: not-the-errands\n  broker_name: blacksmith\n", cc.URL()))
	client, err := cf.New(cf.Options{API: cc.URL(), ClientID: ccsim.DefaultClientID, ClientSecret: ccsim.DefaultClientSecret})
	Expect(err).NotTo(HaveOccurred())
	return &errandPlatform{cc: cc, config: config, cf: client, admin: cf.NewAdmin(client),
		env: []string{"BLACKSMITH_ERRAND_CF_CLIENT_ID=" + ccsim.DefaultClientID, "BLACKSMITH_ERRAND_CF_CLIENT_SECRET=" + ccsim.DefaultClientSecret}}
}

// visibility is the platform's visibility of the broker's plan of catalog id.
func (p *errandPlatform) visibility(planID string) string {
	GinkgoHelper()
	plans, err := p.cf.ServicePlans(ctxSecs(10), "blacksmith")
	Expect(err).NotTo(HaveOccurred())
	for _, pl := range plans {
		if pl.CatalogID == planID {
			v, err := p.admin.PlanVisibility(ctxSecs(10), pl.GUID)
			Expect(err).NotTo(HaveOccurred())
			var names []string
			for _, o := range v.Orgs {
				names = append(names, o.Name)
			}
			slices.Sort(names)
			return strings.Join(append([]string{v.Type}, names...), " ")
		}
	}
	Fail("no plan " + planID)
	return ""
}

// provisionThroughCC creates an instance of redis-small through the platform, which asks the daemon.
func (p *errandPlatform) provisionThroughCC(name, spaceGUID string) string {
	GinkgoHelper()
	tok := ccToken(p.cc)
	var plan string
	for _, pl := range p.cc.Foundation().Plans() {
		if pl.CatalogID == "redis-small" {
			plan = pl.GUID
		}
	}
	status, location, body := ccCall(p.cc, tok, "POST", "/v3/service_instances", map[string]any{
		"type": "managed", "name": name,
		"relationships": map[string]any{"space": map[string]any{"data": map[string]any{"guid": spaceGUID}},
			"service_plan": map[string]any{"data": map[string]any{"guid": plan}}},
	})
	Expect(status).To(Equal(http.StatusAccepted), "%v", body)
	Expect(jobEnds(p.cc, tok, location)).To(Equal("COMPLETE"), "the daemon provisioned it")
	_, _, list := ccCall(p.cc, tok, "GET", "/v3/service_instances?names="+name, nil)
	resources, _ := list["resources"].([]any)
	Expect(resources).To(HaveLen(1))
	return resources[0].(map[string]any)["guid"].(string)
}

// ctxSecs is a context that ends after n seconds.
func ctxSecs(n int) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(n)*time.Second)
	DeferCleanup(cancel)
	return ctx
}

var _ = Describe("the operator's errands, the real binary against the simulators and Vault", func() {
	It("register-broker registers the daemon with service access all, none and orgs; a second run changes nothing; deregister-broker refuses while instances exist", func() {
		d := startDaemon("")
		p := newErrandPlatform()
		access := []string{"--broker-url", d.url, "--access", "redis-small=none", "--org", "redis-large=alpha", "--org", "redis-large=beta"}

		s := blacksmithOnce(nil, "register-broker", p.config, access...)
		Expect(s).To(gexec.Exit(2))
		Expect(string(s.Err.Contents())).To(ContainSubstring("set BLACKSMITH_ERRAND_CF_CLIENT_ID and BLACKSMITH_ERRAND_CF_CLIENT_SECRET"),
			"the daemon's read-only client is never the errand's")

		s = blacksmithOnce(p.env, "register-broker", p.config, access...)
		Expect(s).To(gexec.Exit(0), string(s.Err.Contents()))
		out := string(s.Out.Contents())
		Expect(out).To(ContainSubstring(`service broker "blacksmith" created at ` + d.url))
		Expect(out).To(ContainSubstring("plan redis-small (small): none (admin only), was all (public)"))
		Expect(out).To(ContainSubstring("plan redis-large (large): orgs [alpha, beta], was all (public)"))
		Expect(p.visibility("redis-small")).To(Equal("admin"))
		Expect(p.visibility("redis-large")).To(Equal("organization alpha beta"))
		Expect(p.visibility("postgresql-small")).To(Equal("public"), "a plan without a rule: --default-access all")

		s = blacksmithOnce(p.env, "register-broker", p.config, access...)
		Expect(s).To(gexec.Exit(0), string(s.Err.Contents()))
		Expect(string(s.Out.Contents())).To(And(ContainSubstring("plan redis-large (large): orgs [alpha, beta], unchanged"),
			ContainSubstring("register-broker: nothing changed"), Not(ContainSubstring(", was "))))

		s = blacksmithOnce(p.env, "register-broker", p.config, "--broker-url", d.url, "--org", "redis-large=alpha", "--default-access", "keep")
		Expect(s).To(gexec.Exit(0), string(s.Err.Contents()))
		Expect(string(s.Out.Contents())).To(ContainSubstring("plan redis-large (large): orgs [alpha], was orgs [alpha, beta]"))
		Expect(p.visibility("redis-large")).To(Equal("organization alpha"))
		Expect(p.visibility("redis-small")).To(Equal("admin"), "keep: left as it was")

		s = blacksmithOnce(p.env, "register-broker", p.config, "--broker-url", d.url, "--org", "redis-large=gamma")
		Expect(s).To(gexec.Exit(1))
		Expect(string(s.Err.Contents())).To(ContainSubstring(`the platform has no organization "gamma"`))
		Expect(p.visibility("redis-large")).To(Equal("organization alpha"), "nothing changed for an org it could not find")
		s = blacksmithOnce(p.env, "register-broker", p.config, "--broker-url", d.url, "--access", "redis-huge=all")
		Expect(s).To(gexec.Exit(2))
		Expect(string(s.Err.Contents())).To(ContainSubstring(`plan "redis-huge": the catalog has no plan of that id`))

		space, err := p.cc.Foundation().AddSpace(p.cc.Foundation().AddOrg("gamma").GUID, "s")
		Expect(err).NotTo(HaveOccurred())
		plans, err := p.cf.ServicePlans(ctxSecs(10), "blacksmith")
		Expect(err).NotTo(HaveOccurred())
		_, err = p.cc.Foundation().AddInstance("e2e-errand-held", "held", plans[0].GUID, space.GUID, ccsim.LastOperation{Type: ccsim.OpCreate, State: ccsim.StateSucceeded})
		Expect(err).NotTo(HaveOccurred())
		s = blacksmithOnce(p.env, "deregister-broker", p.config)
		Expect(s).To(gexec.Exit(1))
		Expect(string(s.Err.Contents())).To(And(ContainSubstring(`refused: 1 service instance(s) of broker "blacksmith" exist`),
			ContainSubstring("held (e2e-errand-held) in org gamma, space s")))
		_, err = p.cf.ServiceBroker(ctxSecs(10), "blacksmith")
		Expect(err).NotTo(HaveOccurred(), "still registered")

		Expect(p.cc.Foundation().RemoveInstance("e2e-errand-held")).To(BeTrue())
		s = blacksmithOnce(p.env, "deregister-broker", p.config)
		Expect(s).To(gexec.Exit(0), string(s.Err.Contents()))
		Expect(string(s.Out.Contents())).To(ContainSubstring(`service broker "blacksmith" deregistered`))
		_, err = p.cf.ServiceBroker(ctxSecs(10), "blacksmith")
		Expect(err).To(MatchError(cf.ErrNotFound))
		s = blacksmithOnce(p.env, "deregister-broker", p.config)
		Expect(s).To(gexec.Exit(0))
		Expect(string(s.Out.Contents())).To(ContainSubstring("is not registered: nothing to do"))
	})

	It("delete-all-service-instances refuses without its flag, then deprovisions each instance through the Cloud Controller, naming those that failed", func() {
		d := startDaemon("")
		p := newErrandPlatform()
		Expect(blacksmithOnce(p.env, "register-broker", p.config, "--broker-url", d.url)).To(gexec.Exit(0))
		space, err := p.cc.Foundation().AddSpace(p.cc.Foundation().AddOrg("o").GUID, "s")
		Expect(err).NotTo(HaveOccurred())
		first, second := p.provisionThroughCC("doomed-1", space.GUID), p.provisionThroughCC("doomed-2", space.GUID)

		s := blacksmithOnce(p.env, "delete-all-service-instances", p.config)
		Expect(s).To(gexec.Exit(2))
		Expect(string(s.Err.Contents())).To(ContainSubstring("refused: this deletes every service instance"))
		Expect(p.cc.Foundation().InstanceCount()).To(Equal(2))

		Expect(p.cc.Knobs().InjectFailure(ccsim.Failure{Endpoint: "DELETE /v3/service_instances/:guid", Status: 503, Count: 1})).To(Succeed())
		s = blacksmithOnce(p.env, "delete-all-service-instances", p.config, "--i-understand-this-deletes-everything")
		Expect(s).To(gexec.Exit(1))
		Expect(string(s.Err.Contents())).To(And(ContainSubstring("1 of 2 instance(s) not deleted"), ContainSubstring("("+first+")"),
			ContainSubstring("status 503")))
		Expect(string(s.Out.Contents())).To(ContainSubstring("deleted doomed-2 (" + second + ")"))

		s = blacksmithOnce(p.env, "delete-all-service-instances", p.config, "--i-understand-this-deletes-everything")
		Expect(s).To(gexec.Exit(0), string(s.Err.Contents()))
		Expect(string(s.Out.Contents())).To(ContainSubstring("done, 1 instance(s) deleted"))
		Expect(p.cc.Foundation().InstanceCount()).To(BeZero())
		for _, id := range []string{first, second} {
			code, _ := director("/deployments/redis-small-" + id)
			Expect(code).To(Equal(http.StatusNotFound), "the daemon deprovisioned %s: its deployment is gone", id)
		}
		Expect(blacksmithOnce(p.env, "deregister-broker", p.config)).To(gexec.Exit(0), "nothing holds the broker any more")
	})

	It("recreate-all recreates each instance's VMs through a Director task, canaries first, and records it", func() {
		d := startDaemon("")
		c := newOSBClient(d, brokerUser, brokerPass)
		ids := []string{"e2e-recreate-1", "e2e-recreate-2"}
		for _, id := range ids {
			_, err := c.ProvisionInstance(&osb.ProvisionRequest{InstanceID: id, AcceptsIncomplete: true, ServiceID: "redis",
				PlanID: "redis-small", OrganizationGUID: "org", SpaceGUID: "space"})
			Expect(err).NotTo(HaveOccurred())
		}
		for _, id := range ids {
			eventuallySucceeded(c, id)
			DeferCleanup(func() {
				_, err := c.DeprovisionInstance(&osb.DeprovisionRequest{InstanceID: id, AcceptsIncomplete: true, ServiceID: "redis", PlanID: "redis-small"})
				Expect(err).NotTo(HaveOccurred())
				eventuallyDeleted(c, id)
			})
		}
		scope := []string{"--instance", ids[0], "--instance", ids[1], "--canaries", "1", "--max-in-flight", "2"}

		dry := blacksmithOnce(nil, "recreate-all", d.config, append(scope, "--dry-run")...)
		Expect(dry).To(gexec.Exit(0), string(dry.Err.Contents()))
		Expect(string(dry.Out.Contents())).To(MatchRegexp(ids[0] + `\s+redis-small-` + ids[0] + `\s+redis-small\s+true\s+would_recreate\s+-`))

		s := blacksmithOnce(nil, "recreate-all", d.config, append(scope, "--json")...)
		Expect(s).To(gexec.Exit(0), string(s.Err.Contents()))
		var rep struct {
			Instances []struct {
				InstanceID, State string
				Canary            bool
				TaskID            int `json:"task_id"`
			}
		}
		Expect(json.Unmarshal(s.Out.Contents(), &rep)).To(Succeed())
		Expect(rep.Instances).To(HaveLen(2))
		for i, r := range rep.Instances {
			Expect(r.State).To(Equal("recreated"))
			Expect(r.Canary).To(Equal(i == 0))
			code, task := director(fmt.Sprintf("/tasks/%d", r.TaskID))
			Expect(code).To(Equal(http.StatusOK))
			Expect(task).To(And(ContainSubstring(`"deployment":"redis-small-`+ids[i]+`"`), ContainSubstring(`"state":"done"`)))
			Expect(task).To(ContainSubstring(`"context_id":"blacksmith-recreate-`), "under the operation's context id")
			code, view := d.get("/b/instances/"+ids[i], opUser, opPass)
			Expect(code).To(Equal(http.StatusOK))
			Expect(view).To(ContainSubstring("recreate: every VM recreated (task " + fmt.Sprint(r.TaskID) + ")"))
		}
		Expect(string(s.Err.Contents())).To(ContainSubstring("recreate-all: " + ids[0] + " recreated"))
	})
})

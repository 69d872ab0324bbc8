package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	osb "sigs.k8s.io/go-open-service-broker-client/v2"
)

// hostileIP is where a hostile deployment's VM claims to be (never dialled:
// the broker only reads it back into credentials).
const hostileIP = "127.0.0.66"

// simGet is the Director simulator at url's answer to path, with its credentials.
func simGet(url, path string) (int, string) {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodGet, url+path, nil)
	Expect(err).NotTo(HaveOccurred())
	req.SetBasicAuth(simUser, simPass)
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	return res.StatusCode, string(body)
}

// simManifest is the manifest of deployment name on the simulator at url.
func simManifest(url, name string) string {
	GinkgoHelper()
	code, body := simGet(url, "/deployments/"+name)
	Expect(code).To(Equal(http.StatusOK), body)
	var d struct {
		Manifest string `json:"manifest"`
	}
	Expect(json.Unmarshal([]byte(body), &d)).To(Succeed())
	return d.Manifest
}

// attackerManifest is a deployment named name that anyone who can deploy
// on a shared Director could write: it claims instance id in its
// properties.blacksmith, and its VM is at hostileIP. It holds no secret of
// the instance's (the attacker has none).
func attackerManifest(name, id string) string {
	return "name: " + name + `
releases: [{name: redis, version: latest}]
stemcells: [{alias: default, os: ubuntu-jammy, version: latest}]
instance_groups:
- name: redis
  instances: 1
  azs: [z1]
  vm_type: small
  stemcell: default
  networks: [{name: default, static_ips: [` + hostileIP + `]}]
  jobs: [{name: redis, release: redis, properties: {port: 6379}}]
properties:
  blacksmith: {service_id: redis, plan_id: redis-small, instance_id: ` + id + `}
`
}

// catalogOn is a copy of the sample catalog whose redis-small plan deploys on director.
func catalogOn(director string) string {
	GinkgoHelper()
	return catalogWith(func(plan string) string { return "director: " + director + "\n" + plan })
}

// The trust boundary, end to end: what anyone who can deploy on a shared
// Director puts there never moves a tenant's instance, its credentials or
// its deprovision.
var _ = Describe("a tenant's instance on a shared Director", func() {
	reconcile := func(d *daemon) {
		GinkgoHelper()
		code, body := d.do(http.MethodPost, "/b/reconcile?wait=60s", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
	}

	It("stays on its own Director when another lists a deployment of its name: record, binding and deprovision", func() {
		east, west := startSim("-seed", "0"), startSim("-seed", "0")
		w := newHAWorld(boshSection([]string{east.url, west.url}, "east", "west"))
		w.catalog = catalogOn("west")
		d := w.start("  interval: 1h\n")
		client := newOSBClient(d, brokerUser, brokerPass)
		id := fmt.Sprintf("tenant-a-%d", time.Now().UnixNano())
		name := "redis-small-" + id
		_, err := client.ProvisionInstance(&osb.ProvisionRequest{InstanceID: id, AcceptsIncomplete: true,
			ServiceID: "redis", PlanID: "redis-small", OrganizationGUID: "org-a", SpaceGUID: "space-a"})
		Expect(err).NotTo(HaveOccurred())
		eventuallySucceeded(client, id)
		reconcile(d)

		// East is the first Director; anyone who deploys there copies A's manifest under A's name.
		simPut(east.url, attackerManifest(name, id))
		reconcile(d)
		rec, err := w.store.Record(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec).To(And(HaveField("Director", "west"), HaveField("DeploymentName", name), HaveField("Orphaned", false)))
		_, body := d.get("/b/reconcile", opUser, opPass)
		Expect(body).To(And(ContainSubstring(`"loser_director": "east"`), ContainSubstring(id)), "the conflict is reported")

		bound, err := client.Bind(&osb.BindRequest{BindingID: "b1", InstanceID: id, ServiceID: "redis", PlanID: "redis-small",
			AppGUID: strPtr("app-a")})
		Expect(err).NotTo(HaveOccurred())
		Expect(bound.Credentials["host"]).NotTo(Equal(hostileIP), "A's credentials name A's own VM")
		Expect(bound.Credentials["host"]).To(MatchRegexp(`^\d+\.\d+\.\d+\.\d+$`))

		_, err = client.DeprovisionInstance(&osb.DeprovisionRequest{InstanceID: id, AcceptsIncomplete: true,
			ServiceID: "redis", PlanID: "redis-small"})
		Expect(err).NotTo(HaveOccurred())
		eventuallyDeleted(client, id)
		code, _ := simGet(west.url, "/deployments/"+name)
		Expect(code).To(Equal(http.StatusNotFound), "A's own deployment is the one deleted")
		code, _ = simGet(east.url, "/deployments/"+name)
		Expect(code).To(Equal(http.StatusOK), "the copy on east is not the broker's to delete")
	})

	It("is an orphan once its deployment is gone, whatever deployment's properties.blacksmith names it: no binding to it, updates deploy A's own name", func() {
		sim := startSim("-seed", "0")
		w := newHAWorld(boshSection([]string{sim.url}))
		d := w.start("  interval: 1h\n  orphan_grace_period: 0s\n")
		client := newOSBClient(d, brokerUser, brokerPass)
		id := fmt.Sprintf("tenant-b-%d", time.Now().UnixNano())
		name := "redis-small-" + id
		_, err := client.ProvisionInstance(&osb.ProvisionRequest{InstanceID: id, AcceptsIncomplete: true,
			ServiceID: "redis", PlanID: "redis-small", OrganizationGUID: "org-b", SpaceGUID: "space-b"})
		Expect(err).NotTo(HaveOccurred())
		eventuallySucceeded(client, id)
		manifest := simManifest(sim.url, name)
		Expect(manifest).To(ContainSubstring("instance_id: "+id), "the broker names the instance in properties.blacksmith")

		// A's deployment goes; a deployment of another name claims A's instance by its properties.
		req, _ := http.NewRequest(http.MethodDelete, sim.url+"/_sim/deployments/"+name, nil)
		res, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		simPut(sim.url, attackerManifest("zzz-attacker", id))
		reconcile(d)
		rec, err := w.store.Record(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec).To(And(HaveField("DeploymentName", name), HaveField("Orphaned", true)))

		_, err = client.Bind(&osb.BindRequest{BindingID: "b1", InstanceID: id, ServiceID: "redis", PlanID: "redis-small",
			AppGUID: strPtr("app-b")})
		Expect(err).To(HaveOccurred(), "no VM of A's deployment to bind to")
		Expect(err.Error()).NotTo(ContainSubstring(hostileIP))

		_, err = client.UpdateInstance(&osb.UpdateInstanceRequest{InstanceID: id, AcceptsIncomplete: true, ServiceID: "redis",
			PlanID: strPtr("redis-small"), Parameters: map[string]any{"maxmemory": "512mb"}})
		if err == nil {
			Eventually(func() osb.LastOperationState { s, _, _ := lastOperation(client, id); return s }).
				WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).ShouldNot(Equal(osb.StateInProgress))
		}
		secrets, ok, err := w.store.Secret(context.Background(), id+"/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(simManifest(sim.url, "zzz-attacker")).To(And(Equal(attackerManifest("zzz-attacker", id)),
			Not(ContainSubstring(fmt.Sprint(secrets["password"])))), "A's manifest and password never go to the attacker's deployment")
	})
})

package broker_test

import (
	"context"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// adoptedManifest is what an operator's deployment of plan redis-small
// runs, found and adopted by the reconciler: its password a variable of the
// Director's configuration server, its own network and zones, release
// 1.0.0 and a smoke-tests errand; not what the plan renders.
const adoptedManifest = `name: redis-small-adopted-1
releases:
- {name: redis, version: "1.0.0"}
stemcells:
- {alias: default, os: ubuntu-jammy, version: "1.0"}
instance_groups:
- name: redis
  instances: 1
  azs: [z1, z2, z3]
  vm_type: default
  stemcell: default
  networks: [{name: services}]
  jobs:
  - name: redis
    release: redis
    properties:
      password: ((redis_password))
- name: smoke-tests
  lifecycle: errand
  instances: 1
  azs: [z1]
  vm_type: default
  stemcell: default
  networks: [{name: services}]
  jobs:
  - {name: smoke-tests, release: redis}
variables:
- {name: redis_password, type: password}
properties:
  maxmemory: 64mb
  tuning: {io_threads: 1, lazyfree: true}
`

var _ = Describe("an operation guarded by the Director's diff", func() {
	var (
		e   *env
		ctx context.Context
	)
	BeforeEach(func() {
		e = newEnv()
		ctx = context.Background()
	})

	// confirmedAdoption deploys manifest as an operator did and writes the
	// record of the adoption an operator confirmed (no secrets in Vault).
	confirmedAdoption := func(id, manifest string) {
		GinkgoHelper()
		task, err := e.client.Deploy(ctx, []byte(manifest))
		Expect(err).NotTo(HaveOccurred())
		task, err = e.client.WaitTask(ctx, task.ID, 20*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(task.Succeeded()).To(BeTrue(), task.Result)
		Expect(e.store.PutManifest(ctx, id, manifest)).To(Succeed())
		_, err = e.store.Update(ctx, map[string]vault.Change{id: func(*vault.Record) (*vault.Record, error) {
			return &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: "redis-small-" + id,
				OrganizationGUID: "org-1", SpaceGUID: "space-1", AdoptedAt: "2026-11-25T00:00:00Z",
				AdoptionConfirmedAt: "2026-11-25T01:00:00Z", MatchStrategy: "metadata", MatchConfidence: 1}, nil
		}})
		Expect(err).NotTo(HaveOccurred())
	}
	running := func(name string) string {
		GinkgoHelper()
		text, err := e.client.Manifest(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		return text
	}
	events := func(id string) []vault.Event {
		GinkgoHelper()
		ev, err := e.store.Events(ctx, id, 100)
		Expect(err).NotTo(HaveOccurred())
		return ev
	}

	It("refuses the update of an adopted instance that would replace its network and zones, naming each, and deploys nothing", func() {
		confirmedAdoption("adopted-1", adoptedManifest)
		tasks := e.director.Stats().Tasks
		a := e.request("PATCH", instancePath("adopted-1")+"?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "parameters": map[string]any{"maxmemory": "128mb"}})
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Raw)
		desc := a.Body["description"].(string)
		for _, want := range []string{"network at instance_groups/redis/networks", "az at instance_groups/redis/azs",
			"refused before anything was deployed"} {
			Expect(desc).To(ContainSubstring(want))
		}
		Expect(desc).NotTo(ContainSubstring("variable"), "the variable is kept, not replaced")
		Expect(desc).NotTo(ContainSubstring("errand"), "the operator's errand is kept, not removed")
		Expect(e.director.Stats().Tasks).To(Equal(tasks), "no task")
		Expect(running("redis-small-adopted-1")).To(ContainSubstring("((redis_password))"))
		rec := e.record("adopted-1")
		Expect(rec.LastOperation).To(BeNil())
		Expect(rec.Parameters).To(BeEmpty())
		Expect(kindsOf(events("adopted-1"))).To(ContainElement("refused"))
	})

	It("deploys the update an operator allowed for the instance, its history naming what the allowance let through", func() {
		confirmedAdoption("adopted-1", adoptedManifest)
		Expect(e.store.Documents.PutAllowance(ctx, "adopted-1", vault.Allowance{Classes: []string{"network", "az"}, By: "spec",
			At: time.Now().UTC().Format(time.RFC3339), Until: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})).To(Succeed())
		a := e.request("PATCH", instancePath("adopted-1")+"?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "parameters": map[string]any{"maxmemory": "128mb"}})
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		e.eventuallyState("adopted-1", "succeeded")
		after := running("redis-small-adopted-1")
		Expect(after).To(ContainSubstring("name: default"))
		Expect(after).To(ContainSubstring("((redis_password))"), "an allowance of networks and zones is no allowance of the password")
		var update vault.Event
		for _, ev := range events("adopted-1") {
			if ev.Kind == "update" {
				update = ev
			}
		}
		Expect(update.Details).To(HaveKeyWithValue("allowed", And(ContainSubstring("network at instance_groups/redis/networks"),
			ContainSubstring("az at instance_groups/redis/azs"))))

		Expect(e.store.Documents.PutAllowance(ctx, "adopted-1", vault.Allowance{Classes: []string{"network"}, By: "spec",
			At: "2026-01-01T00:00:00Z", Until: "2026-01-01T01:00:00Z"})).To(Succeed())
		allowed, err := e.store.AllowedNow(ctx, "adopted-1", time.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(allowed).To(BeEmpty(), "an allowance past its end allows nothing")
	})

	It("deploys an update that keeps the variable, the errand and the network, after a backup of what ran", func() {
		// The operator's deployment on the plan's own network and zone: the
		// update then changes a property and keeps the rest.
		own := strings.NewReplacer("networks: [{name: services}]", "networks: [{name: default}]",
			"azs: [z1, z2, z3]", "azs: [z1]", `version: "1.0.0"`, `version: "16.1.0"`).Replace(adoptedManifest)
		confirmedAdoption("adopted-1", own)
		before := running("redis-small-adopted-1")
		a := e.request("PATCH", instancePath("adopted-1")+"?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "parameters": map[string]any{"maxmemory": "128mb"}})
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		e.eventuallyState("adopted-1", "succeeded")

		after := running("redis-small-adopted-1")
		Expect(after).To(ContainSubstring("((redis_password))"), "the configuration server's password is kept")
		Expect(after).To(ContainSubstring("smoke-tests"))
		Expect(after).To(ContainSubstring("maxmemory: 128mb"))
		_, stored, err := e.store.Secret(ctx, "adopted-1/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(stored).To(BeFalse(), "no password generated over the one that runs")

		backups, err := e.store.Backups(ctx, "adopted-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(backups).NotTo(BeEmpty())
		oldest := backups[len(backups)-1]
		text, ok, err := e.store.Archive.BackupManifest(ctx, "adopted-1", oldest)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(text).To(Equal(before), "the first backup holds the manifest the update replaced")
		Expect(e.record("adopted-1").Parameters).To(HaveKeyWithValue("maxmemory", "128mb"))
		var update vault.Event
		for _, ev := range events("adopted-1") {
			if ev.Kind == "update" {
				update = ev
			}
		}
		Expect(update.Details).To(HaveKeyWithValue("backup", oldest))
		Expect(update.Details).To(HaveKeyWithValue("kept", "instance_groups/redis/jobs/redis/properties/password, instance_groups/smoke-tests"))
		Expect(update.Details).To(HaveKeyWithValue("diff_properties", ContainSubstring("maxmemory")))
	})

	It("answers a bind of an instance whose credentials are the configuration server's with a clear 422", func() {
		confirmedAdoption("adopted-1", adoptedManifest)
		a := e.request("PUT", instancePath("adopted-1")+"/service_bindings/b-1", map[string]any{"service_id": "redis", "plan_id": "redis-small"})
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Raw)
		Expect(a.Body["description"]).To(ContainSubstring("credentials are not held by the broker"))
	})

	It("refuses an update that would need a password the broker does not hold, generating none", func() {
		literal := strings.NewReplacer("password: ((redis_password))", "password: set-by-hand",
			"networks: [{name: services}]", "networks: [{name: default}]", "azs: [z1, z2, z3]", "azs: [z1]").Replace(adoptedManifest)
		confirmedAdoption("adopted-1", literal)
		a := e.request("PATCH", instancePath("adopted-1")+"?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "parameters": map[string]any{"maxmemory": "128mb"}})
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Raw)
		Expect(a.Raw).To(SatisfyAny(ContainSubstring("credentials are not held"), ContainSubstring("secret at")))
		Expect(running("redis-small-adopted-1")).To(ContainSubstring("password: set-by-hand"))
		_, stored, err := e.store.Secret(ctx, "adopted-1/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(stored).To(BeFalse())
	})

	It("backs up the manifest the Director runs before a deprovision deletes it, not only the one Vault records", func() {
		e.provisioned("del-1", "redis-small")
		recorded, _, err := e.store.Manifest(ctx, "del-1")
		Expect(err).NotTo(HaveOccurred())
		changed := strings.Replace(recorded, "maxmemory: 64mb", "maxmemory: 99mb", 1) // changed behind the broker's back
		Expect(changed).NotTo(Equal(recorded))
		task, err := e.client.Deploy(ctx, []byte(changed))
		Expect(err).NotTo(HaveOccurred())
		_, err = e.client.WaitTask(ctx, task.ID, 20*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		runs := running("redis-small-del-1")
		a := e.request("DELETE", instancePath("del-1")+"?service_id=redis&plan_id=redis-small&accepts_incomplete=true", nil)
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Eventually(func() int { s, _, _ := e.lastOperation("del-1"); return s }).WithTimeout(10 * time.Second).Should(Equal(http.StatusGone))
		backups, err := e.store.Backups(ctx, "del-1")
		Expect(err).NotTo(HaveOccurred())
		var manifests []string
		for _, b := range backups {
			text, _, err := e.store.Archive.BackupManifest(ctx, "del-1", b)
			Expect(err).NotTo(HaveOccurred())
			manifests = append(manifests, text)
		}
		Expect(manifests).To(ContainElement(runs), "what ran when it was deleted")
	})

	Describe("an update whose task fails", func() {
		It("leaves the record as last applied; the same update sent again deploys again; the next does not carry the failed one", func() {
			e.provisioned("f-1", "redis-small")
			e.director.FailNextTask("redis-small-f-1")
			patch := map[string]any{"service_id": "redis", "plan_id": "redis-small", "parameters": map[string]any{"maxmemory": "256mb"}}
			a := e.request("PATCH", instancePath("f-1")+"?accepts_incomplete=true", patch)
			Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
			e.eventuallyState("f-1", "failed")
			rec := e.record("f-1")
			Expect(rec.Parameters).NotTo(HaveKey("maxmemory"), "a failed update applies nothing")
			Expect(rec.LastOperation.Pending).To(BeNil())
			stored, _, err := e.store.Manifest(ctx, "f-1")
			Expect(err).NotTo(HaveOccurred())
			Expect(stored).To(Equal(running("redis-small-f-1")), "Vault records what runs, not what failed")

			tasks := e.director.Stats().Tasks
			again := e.request("PATCH", instancePath("f-1")+"?accepts_incomplete=true", patch)
			Expect(again.Status).To(Equal(http.StatusAccepted), "the identical retry deploys again: "+again.Raw)
			Expect(e.director.Stats().Tasks).To(Equal(tasks + 1))
			e.eventuallyState("f-1", "succeeded")
			Expect(e.record("f-1").Parameters).To(HaveKeyWithValue("maxmemory", "256mb"))

			e.director.FailNextTask("redis-small-f-1")
			failed := map[string]any{"service_id": "redis", "plan_id": "redis-small", "parameters": map[string]any{"tuning": map[string]any{"io_threads": 4}}}
			Expect(e.request("PATCH", instancePath("f-1")+"?accepts_incomplete=true", failed).Status).To(Equal(http.StatusAccepted))
			e.eventuallyState("f-1", "failed")
			next := map[string]any{"service_id": "redis", "plan_id": "redis-small", "parameters": map[string]any{"note": "x"}}
			Expect(e.request("PATCH", instancePath("f-1")+"?accepts_incomplete=true", next).Status).To(Equal(http.StatusAccepted))
			e.eventuallyState("f-1", "succeeded")
			params := e.record("f-1").Parameters
			Expect(params).To(HaveKeyWithValue("note", "x"))
			Expect(params).NotTo(HaveKey("tuning"), "the failed update is not carried along")
			Expect(running("redis-small-f-1")).NotTo(ContainSubstring("io_threads: 4"))
		})
	})
})

func kindsOf(events []vault.Event) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev.Kind
	}
	return out
}

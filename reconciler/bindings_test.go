package reconciler_test

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// perBindingCatalog is redis-small declaring a user per binding.
func perBindingCatalog() *catalog.Catalog {
	GinkgoHelper()
	m, err := catalog.ParseTemplate("manifest.yml", `name: x
releases: [{name: redis, version: "16.1.0"}]
stemcells: [{alias: default, os: ubuntu-jammy, version: "1.0"}]
instance_groups:
- name: redis
  instances: 1
  azs: [z1]
  vm_type: default
  stemcell: default
  networks: [{name: default}]
  jobs:
  - name: redis
    release: redis
    properties:
      password: {{ .Secrets.password }}
      acl_users:
      {{- range .Bindings }}
      - {name: {{ .Secrets.username }}, password: {{ .Secrets.password }}}
      {{- end }}
`)
	Expect(err).NotTo(HaveOccurred())
	c, err := catalog.ParseTemplate("credentials.yml", "host: {{ .Host }}\nusername: {{ .Binding.Secrets.username }}\npassword: {{ .Binding.Secrets.password }}\n")
	Expect(err).NotTo(HaveOccurred())
	return &catalog.Catalog{Services: []catalog.Service{{ID: "redis", Name: "redis", Bindable: true, Plans: []catalog.Plan{
		{ID: "redis-small", Name: "small", ServiceID: "redis", Manifest: m, Credentials: c, Bindings: catalog.BindingsPerBinding},
	}}}}
}

var _ = Describe("the bindings' check", func() {
	It("puts lost binding credentials back from the deployed manifest or a backup, never new ones, and reports those it cannot", func() {
		e := newEnv(envOptions{})
		ctx := context.Background()
		cat := perBindingCatalog()
		b, err := broker.New(broker.Options{Catalog: cat, Directors: []broker.NamedDirector{{Director: e.bosh, Reader: e.bosh}},
			Store: e.store, Username: "u", Password: "p", Logger: testLogger()})
		Expect(err).NotTo(HaveOccurred())
		h := &listener{}
		reg := prometheus.NewRegistry()
		e.m = e.newManagerWith(func(o *reconciler.Options) {
			o.Catalog, o.Operations, o.Renderer, o.Notifier, o.Registerer = cat, b, b, h, reg
		})
		const id = "0b0b0b0b-0000-4000-8000-0000000000b1"
		_, err = b.Provision(ctx, id, domain.ProvisionDetails{ServiceID: "redis", PlanID: "redis-small", OrganizationGUID: "o", SpaceGUID: "s"}, true)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() domain.LastOperationState {
			op, _ := b.LastOperation(ctx, id, domain.PollDetails{})
			return op.State
		}, 15*time.Second, 50*time.Millisecond).Should(Equal(domain.Succeeded))
		bind := func(bid string) map[string]any {
			GinkgoHelper()
			_, err := b.Bind(ctx, id, bid, domain.BindDetails{ServiceID: "redis", PlanID: "redis-small", AppGUID: "app"}, true)
			Expect(err).NotTo(HaveOccurred())
			Eventually(func() domain.LastOperationState {
				op, _ := b.LastBindingOperation(ctx, id, bid, domain.PollDetails{OperationData: "bind"})
				return op.State
			}, 15*time.Second, 50*time.Millisecond).Should(Equal(domain.Succeeded))
			got, err := b.GetBinding(ctx, id, bid, domain.FetchBindingDetails{})
			Expect(err).NotTo(HaveOccurred())
			return got.Credentials.(map[string]any)
		}
		credsA, credsB := bind("bind-a"), bind("bind-b")
		e.run(report.RunOptions{})
		loseBinding := func(bid string) {
			GinkgoHelper()
			code, body, err := vaultServer.Do(http.MethodDelete, "/v1/"+e.mount+"/metadata/"+id+"/bindings/"+bid, "")
			Expect(err).NotTo(HaveOccurred())
			Expect(code).To(Equal(http.StatusNoContent), string(body))
		}

		// The backups taken before each bind's deploy hold the bindings:
		// gone too, the manifest is where a binding's user is found.
		backups, err := e.store.Backups(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(backups).NotTo(BeEmpty(), "what ran was backed up before each bind's deploy")
		for _, backup := range backups {
			code, body, err := vaultServer.Do(http.MethodDelete, "/v1/"+e.mount+"/metadata/"+id+"/backups/"+backup, "")
			Expect(err).NotTo(HaveOccurred())
			Expect(code).To(Equal(http.StatusNoContent), string(body))
		}
		loseBinding("bind-a")
		s := e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Bindings).NotTo(BeNil())
		Expect(s.Bindings.Restored).To(ConsistOf(And(HaveField("InstanceID", id), HaveField("BindingID", "bind-a"),
			HaveField("From", "restored from the manifest"))))
		back, err := b.GetBinding(ctx, id, "bind-a", domain.FetchBindingDetails{})
		Expect(err).NotTo(HaveOccurred())
		Expect(back.Credentials).To(And(HaveKeyWithValue("username", credsA["username"]), HaveKeyWithValue("password", credsA["password"])),
			"the same credentials, never new ones")

		// An unbind backs every secret up: a binding lost after it comes back from that backup.
		_, err = b.Unbind(ctx, id, "bind-a", domain.UnbindDetails{ServiceID: "redis", PlanID: "redis-small"}, true)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error {
			_, err := b.LastBindingOperation(ctx, id, "bind-a", domain.PollDetails{OperationData: "unbind"})
			return err
		}, 15*time.Second, 50*time.Millisecond).Should(HaveOccurred(), "410 once gone")
		loseBinding("bind-b")
		s = e.run(report.RunOptions{})
		Expect(s.Bindings.Restored).To(ConsistOf(And(HaveField("BindingID", "bind-b"), HaveField("From", HavePrefix("restored from backup ")))))
		back, err = b.GetBinding(ctx, id, "bind-b", domain.FetchBindingDetails{})
		Expect(err).NotTo(HaveOccurred())
		Expect(back.Credentials).To(HaveKeyWithValue("password", credsB["password"]))

		// A binding listed that nothing holds is lost: reported, told once, never made up.
		Expect(e.store.UpdateSecret(ctx, id+"/binding-ids", func(cur map[string]any, _ bool) (map[string]any, error) {
			return map[string]any{"ids": append(cur["ids"].([]any), "ghost")}, nil
		})).To(Succeed())
		s = e.run(report.RunOptions{})
		Expect(s.Bindings.Lost).To(ConsistOf(And(HaveField("InstanceID", id), HaveField("BindingID", "ghost"),
			HaveField("Reason", ContainSubstring("the manifest declares no user")))))
		Expect(s.Bindings.LostTotal).To(Equal(1))
		_, ok, err := e.store.Secret(ctx, id+"/bindings/ghost")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "nothing generated")
		Eventually(func() []notify.Event { return h.of(notify.BindingLost) }).Should(HaveLen(1))
		e.run(report.RunOptions{})
		Expect(h.of(notify.BindingLost)).To(HaveLen(1), "told once")
		Expect(e.m.Status().Bindings.LostTotal).To(Equal(1))
		Expect(counter(reg, "blacksmith_bindings_lost", nil)).To(Equal(1.0))
		v, err := e.m.Views().Instance(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.LostBindings).To(HaveKey("ghost"))
		events, err := e.store.Events(ctx, id, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(kindsOf(events)).To(ContainElements("binding_restored", "binding_lost"))
	})
})

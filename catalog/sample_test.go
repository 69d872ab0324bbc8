package catalog_test

import (
	"context"
	"fmt"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

// sampleDir is the sample catalog shipped for `make run`.
const sampleDir = "../manifests/catalog"

func render(name string, t *catalog.Template, data catalog.CredentialsData) string {
	GinkgoHelper()
	Expect(t).NotTo(BeNil(), name)
	out, err := t.Render(data)
	Expect(err).NotTo(HaveOccurred(), name)
	return string(out)
}

func dataFor(s catalog.Service, p catalog.Plan, params map[string]any) catalog.CredentialsData {
	const id = "6c1e4c5e-5d5a-4f6e-9a43-0d2f1b7e8c11"
	if params == nil {
		params = map[string]any{} // the broker never passes nil
	}
	binding := catalog.Binding{ID: "b-1", Secrets: map[string]any{}}
	bindings := []catalog.Binding{}
	if p.PerBinding() { // two bindings, each with its own user; this one is the second
		bindings = []catalog.Binding{
			{ID: "b-0", Secrets: map[string]any{"username": "ufirst00000000", "password": "Pw0first0000"}},
			{ID: "b-1", Secrets: map[string]any{"username": "usecond0000000", "password": "Pw1second000"}},
		}
		binding = bindings[1]
	}
	return catalog.CredentialsData{
		ManifestData: catalog.ManifestData{
			DeploymentName: p.ID + "-" + id, InstanceID: id, ServiceID: s.ID, PlanID: p.ID,
			Params:  params,
			Secrets: map[string]any{"password": "Xk2v9QpL7mZ3", "username": "u3kd8s7a6f5g4h3"}, Bindings: bindings,
		},
		IPs:  []string{"10.244.0.2", "10.244.0.3", "10.244.0.4"},
		Host: "10.244.0.2", BindingID: binding.ID, Binding: binding,
	}
}

// sampleManifest is the part of a rendered manifest the specs check.
type sampleManifest struct {
	Name     string `yaml:"name"`
	Releases []struct {
		Name, Version string
	} `yaml:"releases"`
	Stemcells []struct {
		Alias, OS, Version string
	} `yaml:"stemcells"`
	InstanceGroups []struct {
		Name      string `yaml:"name"`
		Instances int    `yaml:"instances"`
		Networks  []struct{ Name string }
		Jobs      []struct {
			Name, Release string
			Properties    map[string]any
		} `yaml:"jobs"`
	} `yaml:"instance_groups"`
}

var _ = Describe("the sample catalog", func() {
	var c *catalog.Catalog

	BeforeEach(func() {
		var err error
		c, err = catalog.Load(sampleDir)
		Expect(err).NotTo(HaveOccurred())
	})

	It("offers redis and postgresql with a small and a large plan each", func() {
		Expect(c.PlanIDs()).To(Equal([]string{"postgresql-large", "postgresql-small", "redis-large", "redis-small"}))
		for _, id := range []string{"redis", "postgresql"} {
			s, ok := c.Service(id)
			Expect(ok).To(BeTrue(), id)
			Expect(s.Bindable).To(BeTrue())
			for _, p := range s.Plans {
				Expect(p.Credentials).NotTo(BeNil(), p.ID)
			}
		}
	})

	It("renders every manifest to a deployable BOSH manifest", func() {
		release := map[string]string{"redis": "redis", "postgresql": "postgres"}
		for _, s := range c.Services {
			for _, p := range s.Plans {
				data := dataFor(s, p, nil)
				text := render(p.ID, p.Manifest, data)
				var m sampleManifest
				Expect(yaml.Unmarshal([]byte(text), &m)).To(Succeed(), p.ID)
				Expect(m.Name).To(Equal(data.DeploymentName))
				Expect(m.Releases).To(HaveLen(1))
				Expect(m.Releases[0].Name).To(Equal(release[s.ID]))
				Expect(m.Stemcells[0].Alias).To(Equal("default"))
				Expect(m.InstanceGroups).To(HaveLen(1))
				g := m.InstanceGroups[0]
				Expect(g.Instances).To(BeNumerically(">=", 1))
				Expect(g.Networks).NotTo(BeEmpty())
				Expect(g.Jobs[0].Release).To(Equal(release[s.ID]))
				Expect(g.Jobs[0].Properties).NotTo(BeEmpty())
				Expect(text).To(ContainSubstring(`password: "Xk2v9QpL7mZ3"`), p.ID)
			}
		}
	})

	It("deploys every plan, make run's unmatched deployment and the seeded plans on the simulator's default cloud config", func() {
		d, err := sim.New(sim.Options{TaskDuration: time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(d.Close)
		client, err := bosh.New(bosh.Options{Address: d.URL(), Username: sim.DefaultUsername, Password: sim.DefaultPassword})
		Expect(err).NotTo(HaveOccurred())
		ctx := context.Background()
		deploy := func(what, manifest string) {
			GinkgoHelper()
			t, err := client.Deploy(ctx, []byte(manifest))
			Expect(err).NotTo(HaveOccurred(), what)
			t, err = client.WaitTask(ctx, t.ID, 5*time.Millisecond)
			Expect(err).NotTo(HaveOccurred(), what)
			Expect(t.State).To(Equal(bosh.TaskDone), "%s: %s", what, t.Result)
		}
		for _, s := range c.Services {
			for _, p := range s.Plans {
				deploy(p.ID, render(p.ID, p.Manifest, dataFor(s, p, nil)))
			}
		}
		unmatched, err := os.ReadFile("../manifests/run/unmatched.yml")
		Expect(err).NotTo(HaveOccurred())
		deploy("manifests/run/unmatched.yml", string(unmatched))
		for _, name := range d.SeedDeployments(3, nil) { // the bench's and make run's seeds
			seeded, err := client.Manifest(ctx, name)
			Expect(err).NotTo(HaveOccurred())
			deploy(name, seeded)
		}
	})

	It("takes provision parameters over the defaults", func() {
		s, p, ok := c.Plan("redis-small")
		Expect(ok).To(BeTrue())
		out := render(p.ID, p.Manifest, dataFor(s, p, map[string]any{"maxmemory": "512mb"}))
		Expect(out).To(ContainSubstring(`maxmemory: "512mb"`))
		out = render(p.ID, p.Manifest, dataFor(s, p, nil))
		Expect(out).To(ContainSubstring(`maxmemory: "256mb"`))
	})

	It("renders every credentials template to YAML holding a host and the password", func() {
		for _, s := range c.Services {
			for _, p := range s.Plans {
				data := dataFor(s, p, nil)
				var creds map[string]any
				Expect(yaml.Unmarshal([]byte(render(p.ID, p.Credentials, data)), &creds)).To(Succeed(), p.ID)
				Expect(creds).To(HaveKeyWithValue("host", "10.244.0.2"))
				if !p.PerBinding() {
					Expect(creds).To(HaveKeyWithValue("password", "Xk2v9QpL7mZ3"))
					Expect(creds).To(HaveKeyWithValue("uri", ContainSubstring("Xk2v9QpL7mZ3@10.244.0.2")))
					continue
				}
				Expect(creds).To(HaveKeyWithValue("username", "usecond0000000"), "%s: the binding's own user", p.ID)
				Expect(creds).To(HaveKeyWithValue("password", "Pw1second000"))
				Expect(creds).To(HaveKeyWithValue("uri", ContainSubstring("usecond0000000:Pw1second000@10.244.0.2")))
				Expect(fmt.Sprint(creds)).NotTo(ContainSubstring("Xk2v9QpL7mZ3"), "never the instance's password")
			}
		}
	})

	It("declares a user of its own for each binding of a per_binding plan, in both services", func() {
		perBinding := map[string]int{}
		for _, s := range c.Services {
			for _, p := range s.Plans {
				if !p.PerBinding() {
					continue
				}
				perBinding[s.ID]++
				out := render(p.ID, p.Manifest, dataFor(s, p, nil))
				for _, want := range []string{"ufirst00000000", "Pw0first0000", "usecond0000000", "Pw1second000"} {
					Expect(out).To(ContainSubstring(want), p.ID)
				}
				Expect(p.MaxBindings).To(BeNumerically(">", 0), p.ID)
			}
		}
		Expect(perBinding).To(HaveKey("redis"))
		Expect(perBinding).To(HaveKey("postgresql"))
	})
})

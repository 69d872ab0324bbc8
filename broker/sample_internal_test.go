package broker

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("the sample catalog, rendered by the broker", func() {
	It("gives every plan a named manifest with properties.blacksmith and credentials with a host and the password", func() {
		c, err := catalog.Load("../manifests/catalog")
		Expect(err).NotTo(HaveOccurred())
		Expect(c.PlanIDs()).NotTo(BeEmpty())
		secrets := newSecrets()
		for _, s := range c.Services {
			for _, p := range s.Plans {
				const id = "6c1e4c5e-5d5a-4f6e-9a43-0d2f1b7e8c11"
				md := catalog.ManifestData{DeploymentName: vault.DeploymentName(p.ID, id), InstanceID: id, ServiceID: s.ID, PlanID: p.ID,
					Params: map[string]any{}, Secrets: secrets}
				out, err := renderManifest(p.Manifest, md, p.MergeParameters)
				Expect(err).NotTo(HaveOccurred(), p.ID)
				var m struct {
					Name       string
					Properties struct{ Blacksmith map[string]any }
				}
				Expect(yaml.Unmarshal(out, &m)).To(Succeed(), p.ID)
				Expect(m.Name).To(Equal(md.DeploymentName), p.ID)
				Expect(m.Properties.Blacksmith).To(HaveKeyWithValue("plan_id", p.ID), p.ID)
				Expect(string(out)).NotTo(ContainSubstring("no value"), p.ID)

				binding := catalog.Binding{ID: "b", Secrets: map[string]any{}}
				want := secrets["password"]
				if p.PerBinding() { // the binding's own secrets, never the instance's
					binding.Secrets = newSecrets()
					want = binding.Secrets["password"]
				}
				creds, err := renderCredentials(p.Credentials, catalog.CredentialsData{ManifestData: md,
					IPs: []string{"10.0.0.1", "10.0.0.2"}, Host: "10.0.0.1", BindingID: "b", AppGUID: "a", Binding: binding})
				Expect(err).NotTo(HaveOccurred(), p.ID)
				Expect(creds).To(HaveKeyWithValue("host", "10.0.0.1"), p.ID)
				Expect(creds).To(HaveKeyWithValue("password", want), p.ID)
			}
		}
	})
})

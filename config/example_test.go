package config_test

import (
	"bytes"
	"os"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

const examplePath = "../manifests/blacksmith.conf.example"

// keysOf lists the dotted paths of every mapping key in a YAML document,
// not descending into lists or into the free-form reconciler.releases.
func keysOf(text []byte) []string {
	GinkgoHelper()
	var doc yaml.Node
	Expect(yaml.Unmarshal(text, &doc)).To(Succeed())
	var keys []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n.Kind != yaml.MappingNode || path == "reconciler.releases" {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := strings.TrimPrefix(path+"."+n.Content[i].Value, ".")
			keys = append(keys, key)
			walk(n.Content[i+1], key)
		}
	}
	walk(doc.Content[0], "")
	slices.Sort(keys)
	return keys
}

var _ = Describe("manifests/blacksmith.conf.example", func() {
	var text []byte

	BeforeEach(func() {
		var err error
		text, err = os.ReadFile(examplePath)
		Expect(err).NotTo(HaveOccurred())
	})

	It("passes check-config", func() {
		var stdout, stderr bytes.Buffer
		env := envOf(map[string]string{"BLACKSMITH_CATALOG_DIRS": "../manifests/catalog"})
		Expect(config.CheckConfig(examplePath, env, &stdout, &stderr)).To(Equal(0), stderr.String())
	})

	It("holds every key there is", func() {
		c, err := config.Load(examplePath, envOf(map[string]string{"BLACKSMITH_CATALOG_DIRS": "../manifests/catalog"}))
		Expect(err).NotTo(HaveOccurred())
		effective, err := c.YAML()
		Expect(err).NotTo(HaveOccurred())
		Expect(keysOf(text)).To(Equal(keysOf(effective)))
	})

	It("states the defaults (except where it says it does not)", func() {
		c, err := config.Load(examplePath, envOf(map[string]string{"BLACKSMITH_CATALOG_DIRS": "../manifests/catalog"}))
		Expect(err).NotTo(HaveOccurred())
		d := config.Default()
		d.Broker.Username, d.Broker.Password = c.Broker.Username, c.Broker.Password
		d.Operator.Admin = c.Operator.Admin
		d.Vault.Address, d.BOSH.Address = c.Vault.Address, c.BOSH.Address
		d.Catalog.Dirs = c.Catalog.Dirs
		d.Reconciler.Releases, d.Reconciler.Rules, d.Reconciler.Ignore = c.Reconciler.Releases, c.Reconciler.Rules, c.Reconciler.Ignore
		Expect(c).To(Equal(d))
	})

	It("names every environment variable", func() {
		for _, ev := range config.Environment() {
			Expect(string(text)).To(ContainSubstring(ev.Name), ev.Key)
		}
	})
})

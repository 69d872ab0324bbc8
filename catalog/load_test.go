package catalog_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

var _ = Describe("Load", func() {
	It("reads services and plans with every field", func() {
		dir := good.write()
		c, err := catalog.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Services).To(HaveLen(1))
		s := c.Services[0]
		Expect(s.ID).To(Equal("redis"))
		Expect(s.Name).To(Equal("redis"))
		Expect(s.Description).To(Equal("Redis"))
		Expect(s.Bindable).To(BeTrue(), "bindable defaults to true")
		Expect(s.Tags).To(Equal([]string{"redis", "cache"}))
		Expect(s.Limit).To(Equal(20))
		Expect(s.Plans).To(HaveLen(2))
		large, small := s.Plans[0], s.Plans[1]
		Expect(large.Manifest.Text()).To(Equal(manifest))
		Expect(large.Credentials).To(BeNil())
		Expect(small.Manifest.Text()).To(Equal(manifest))
		Expect(small.Credentials.Text()).To(Equal("host: {{ index .IPs 0 }}\n"))
		Expect(large.Source).To(Equal(filepath.Join(dir, "redis", "large", "plan.yml")), "problems found later name the file")
		Expect(small.Source).To(Equal(filepath.Join(dir, "redis", "small", "plan.yml")))
		large.Manifest, small.Manifest, small.Credentials = nil, nil, nil
		large.Source, small.Source = "", ""
		Expect([]catalog.Plan{large, small}).To(Equal([]catalog.Plan{
			{ID: "redis-large", Name: "large", Description: "Large", ServiceID: "redis", Director: "west", Bindings: catalog.BindingsShared},
			{ID: "redis-small", Name: "small", Description: "Small", Limit: 3, MaxBindings: 4, Bindings: catalog.BindingsPerBinding, Updatable: true, MaximumPollingDuration: 3600, PollingInterval: 30, PostDeployErrands: []string{"smoke-tests", "check.2"}, PreDeleteErrands: []string{"drain-data"}, ServiceID: "redis"},
		}))
	})

	It("renders a per_binding plan's templates with sample bindings, each with its own secrets", func() {
		dir := tree{
			"redis/service.yml":           "id: redis\nname: redis\ndescription: Redis\n",
			"redis/small/plan.yml":        "id: redis-small\nname: small\ndescription: Small\nbindings: per_binding\n",
			"redis/small/manifest.yml":    "name: x\nusers:\n{{- range .Bindings }}\n- name: {{ .Secrets.username }}\n  id: {{ .ID }}\n{{- end }}\n",
			"redis/small/credentials.yml": "username: {{ .Binding.Secrets.username }}\npassword: {{ .Binding.Secrets.password }}\n",
		}.write()
		c, err := catalog.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		p := c.Services[0].Plans[0]
		Expect(p.PerBinding()).To(BeTrue())
		data := catalog.SampleData(p)
		m, err := p.Manifest.RenderMapping(data.ManifestData)
		Expect(err).NotTo(HaveOccurred())
		Expect(m["users"]).To(HaveLen(2))
		creds, err := p.Credentials.RenderMapping(data)
		Expect(err).NotTo(HaveOccurred())
		Expect(creds).To(Equal(map[string]any{"username": "usample2", "password": "sample2"}), "the sample binding is the second")

		bad := tree{
			"redis/service.yml":        "id: redis\nname: redis\ndescription: Redis\n",
			"redis/small/plan.yml":     "id: redis-small\nname: small\ndescription: Small\nbindings: per_binding\n",
			"redis/small/manifest.yml": "name: x\nusers: {{ (index .Bindings 5).ID }}\n",
		}.write()
		_, err = catalog.Load(bad)
		Expect(err).To(MatchError(ContainSubstring("does not render with sample data")))
	})

	It("reads maintenance_info, semver with pre-release and build metadata", func() {
		dir := good.with(tree{
			"redis/small/plan.yml": "id: redis-small\nname: small\ndescription: d\nmaintenance_info: {version: 1.2.0-rc.1+build.5, description: Redis 7.2}\n",
			"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nmaintenance_info:\n  version: 2.0.0\n",
		}).write()
		c, err := catalog.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		large, small := c.Services[0].Plans[0], c.Services[0].Plans[1]
		Expect(small.MaintenanceInfo).To(Equal(&catalog.MaintenanceInfo{Version: "1.2.0-rc.1+build.5", Description: "Redis 7.2"}))
		Expect(large.MaintenanceInfo).To(Equal(&catalog.MaintenanceInfo{Version: "2.0.0"}))
	})

	It("keeps bindable: false", func() {
		dir := good.with(tree{"redis/service.yml": "id: redis\nname: redis\ndescription: Redis\nbindable: false\n"}).write()
		c, err := catalog.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Services[0].Bindable).To(BeFalse())
	})

	It("reads several directories, in order", func() {
		pg := tree{
			"postgresql/service.yml":        "id: postgresql\nname: postgresql\ndescription: PostgreSQL\n",
			"postgresql/small/plan.yml":     "id: postgresql-small\nname: small\ndescription: Small\n",
			"postgresql/small/manifest.yml": manifest,
		}
		c, err := catalog.Load(pg.write(), good.write())
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Services).To(HaveLen(2))
		Expect(c.Services[0].ID).To(Equal("postgresql"))
		Expect(c.PlanIDs()).To(Equal([]string{"postgresql-small", "redis-large", "redis-small"}))
	})

	It("skips plain files and hidden directories", func() {
		dir := good.with(tree{
			"README.md":         "# not a service\n",
			".git/config":       "[core]\n",
			"redis/.hidden/x":   "x",
			"redis/small/NOTES": "notes",
		}).write()
		c, err := catalog.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.PlanIDs()).To(Equal([]string{"redis-large", "redis-small"}))
	})

	It("follows symbolically linked service directories", func() {
		dir := GinkgoT().TempDir()
		Expect(os.Symlink(filepath.Join(good.write(), "redis"), filepath.Join(dir, "redis"))).To(Succeed())
		c, err := catalog.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.PlanIDs()).To(HaveLen(2))
	})

	It("returns an empty catalog for no directories", func() {
		c, err := catalog.Load()
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Services).To(BeEmpty())
		Expect(c.PlanIDs()).To(BeEmpty())
	})
})

var _ = Describe("lookups", func() {
	var c *catalog.Catalog

	BeforeEach(func() {
		var err error
		c, err = catalog.Load(good.write())
		Expect(err).NotTo(HaveOccurred())
	})

	It("finds a plan with its service", func() {
		s, p, ok := c.Plan("redis-small")
		Expect(ok).To(BeTrue())
		Expect(s.ID).To(Equal("redis"))
		Expect(p.Name).To(Equal("small"))
		Expect(p.ServiceID).To(Equal("redis"))
	})

	It("does not find an unknown plan", func() {
		_, _, ok := c.Plan("redis-medium")
		Expect(ok).To(BeFalse())
	})

	It("finds a service by id", func() {
		s, ok := c.Service("redis")
		Expect(ok).To(BeTrue())
		Expect(s.Plans).To(HaveLen(2))
		_, ok = c.Service("mysql")
		Expect(ok).To(BeFalse())
	})

	It("works on a catalog built by hand", func() {
		hand := &catalog.Catalog{Services: []catalog.Service{{ID: "s", Plans: []catalog.Plan{{ID: "p", ServiceID: "s"}}}}}
		_, p, ok := hand.Plan("p")
		Expect(ok).To(BeTrue())
		Expect(p.ServiceID).To(Equal("s"))
		Expect(hand.PlanIDs()).To(Equal([]string{"p"}))
	})

	It("answers not found on a nil catalog", func() {
		var none *catalog.Catalog
		_, _, ok := none.Plan("redis-small")
		Expect(ok).To(BeFalse())
		Expect(none.PlanIDs()).To(BeEmpty())
	})
})

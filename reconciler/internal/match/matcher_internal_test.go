package match

import (
	"strings"

	"github.com/cloudfoundry-community/gogobosh"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

const (
	uuid1 = "0b6e8d4c-3c62-4f5e-9a51-2d1f0c9e7a11"
	uuid2 = "5f2c1a9b-8e7d-4c3b-a1f0-9e8d7c6b5a42"
)

var testCatalog = &catalog.Catalog{Services: []catalog.Service{
	{ID: "redis", Name: "redis", Plans: []catalog.Plan{
		{ID: "redis-small", Name: "small", ServiceID: "redis"},
		{ID: "redis-large", Name: "large", ServiceID: "redis"},
	}},
	{ID: "postgresql", Name: "postgresql", Plans: []catalog.Plan{
		{ID: "pg-1", Name: "standalone", ServiceID: "postgresql"},
	}},
	{ID: "kafka", Name: "kafka", Plans: []catalog.Plan{
		{ID: "kafka-std", Name: "standard", ServiceID: "kafka"},
		{ID: "kafka-big", Name: "big", ServiceID: "kafka"},
	}},
}}

var testMatchConfig = config.ReconcilerConfig{
	Releases: map[string]string{"redis": "redis", "postgres": "postgresql"},
	Rules: []config.Rule{
		{Name: "legacy", Pattern: `legacy-(?P<plan>[a-z-]+)--(?P<instance>[0-9a-f]{8})`},
		{Name: "kafka", Pattern: `kafka-(?P<instance>\d+)`, ServiceID: "kafka", PlanID: "kafka-std"},
		{Name: "by-plan-name", Pattern: `svc-(?P<plan>[a-z]+)-(?P<instance>[a-z0-9]+)`, ServiceID: "redis"},
	},
}

func deployment(name string, releases ...string) bosh.Deployment {
	d := bosh.Deployment{Name: name}
	for _, r := range releases {
		d.Releases = append(d.Releases, gogobosh.Resource{Name: r, Version: "1"})
	}
	return d
}

func manifestOf(text string) *Manifest {
	m, err := Parse(text)
	Expect(err).NotTo(HaveOccurred())
	return m
}

var _ = Describe("matcher", func() {
	var m *Matcher
	BeforeEach(func() {
		var err error
		m, err = New(testCatalog, testMatchConfig)
		Expect(err).NotTo(HaveOccurred())
	})

	DescribeTable("matches deployments, first strategy wins",
		func(d bosh.Deployment, manifest string, want report.Match) {
			var man *Manifest
			if manifest != "" {
				man = manifestOf(manifest)
			}
			got, ok, reason := m.Match(d, man)
			Expect(ok).To(BeTrue(), reason)
			Expect(got).To(Equal(want))
		},
		Entry("1 name: plan id prefix and trailing UUID",
			deployment("redis-small-"+uuid1), "",
			report.Match{InstanceID: uuid1, ServiceID: "redis", PlanID: "redis-small", Strategy: report.StrategyName, Confidence: ConfidenceName}),
		Entry("1 name wins over metadata naming another instance",
			deployment("redis-large-"+uuid1),
			"properties: {blacksmith: {plan_id: redis-small, instance_id: "+uuid2+"}}",
			report.Match{InstanceID: uuid1, ServiceID: "redis", PlanID: "redis-large", Strategy: report.StrategyName, Confidence: ConfidenceName}),
		Entry("1 name keeps the UUID as written",
			deployment("pg-1-"+"0B6E8D4C-3C62-4F5E-9A51-2D1F0C9E7A11"), "",
			report.Match{InstanceID: "0B6E8D4C-3C62-4F5E-9A51-2D1F0C9E7A11", ServiceID: "postgresql", PlanID: "pg-1", Strategy: report.StrategyName, Confidence: ConfidenceName}),
		Entry("2 metadata at the top level",
			deployment("my-cache"),
			"name: my-cache\nproperties:\n  blacksmith: {service_id: redis, plan_id: redis-small, instance_id: "+uuid1+"}\n",
			report.Match{InstanceID: uuid1, ServiceID: "redis", PlanID: "redis-small", Strategy: report.StrategyMetadata, Confidence: ConfidenceMetadata}),
		Entry("2 metadata under an instance group, service from the catalog",
			deployment("my-cache"),
			"instance_groups:\n- name: redis\n  properties:\n    blacksmith: {plan_id: redis-large, instance_id: "+uuid2+"}\n",
			report.Match{InstanceID: uuid2, ServiceID: "redis", PlanID: "redis-large", Strategy: report.StrategyMetadata, Confidence: ConfidenceMetadata}),
		Entry("2 metadata: a complete instance group block beats an incomplete top-level one",
			deployment("my-cache"),
			"properties: {blacksmith: {plan_id: redis-small}}\ninstance_groups:\n- name: a\n  properties: {blacksmith: {plan_id: redis-small, instance_id: x1}}\n",
			report.Match{InstanceID: "x1", ServiceID: "redis", PlanID: "redis-small", Strategy: report.StrategyMetadata, Confidence: ConfidenceMetadata}),
		Entry("2 metadata wins over a mapped release",
			deployment("cache-"+uuid1, "redis"),
			"properties: {blacksmith: {service_id: kafka, plan_id: kafka-big, instance_id: i9}}",
			report.Match{InstanceID: "i9", ServiceID: "kafka", PlanID: "kafka-big", Strategy: report.StrategyMetadata, Confidence: ConfidenceMetadata}),
		Entry("3 release: plan by the name's ending",
			deployment("team-a-large-"+uuid1, "routing", "redis"), "name: x",
			report.Match{InstanceID: uuid1, ServiceID: "redis", PlanID: "redis-large", Strategy: report.StrategyRelease, Confidence: ConfidenceRelease}),
		Entry("3 release: the service's only plan",
			deployment("db-"+uuid2, "postgres"), "",
			report.Match{InstanceID: uuid2, ServiceID: "postgresql", PlanID: "pg-1", Strategy: report.StrategyRelease, Confidence: ConfidenceRelease}),
		Entry("3 release: plan unknown, lower confidence",
			deployment("cache-"+uuid2, "redis"), "",
			report.Match{InstanceID: uuid2, ServiceID: "redis", Strategy: report.StrategyRelease, Confidence: ConfidenceReleaseNoPl}),
		Entry("3 release wins over a rule",
			deployment("svc-small-"+uuid1, "redis"), "",
			report.Match{InstanceID: uuid1, ServiceID: "redis", PlanID: "redis-small", Strategy: report.StrategyRelease, Confidence: ConfidenceRelease}),
		Entry("4 rule: plan and instance groups, service from the catalog",
			deployment("legacy-redis-small--0badcafe"), "",
			report.Match{InstanceID: "0badcafe", ServiceID: "redis", PlanID: "redis-small", Strategy: report.StrategyRule, Confidence: ConfidenceRule, Rule: "legacy"}),
		Entry("4 rule: fixed service and plan",
			deployment("kafka-42"), "",
			report.Match{InstanceID: "42", ServiceID: "kafka", PlanID: "kafka-std", Strategy: report.StrategyRule, Confidence: ConfidenceRule, Rule: "kafka"}),
		Entry("4 rule: plan given by name",
			deployment("svc-large-abc123"), "",
			report.Match{InstanceID: "abc123", ServiceID: "redis", PlanID: "redis-large", Strategy: report.StrategyRule, Confidence: ConfidenceRule, Rule: "by-plan-name"}),
	)

	DescribeTable("leaves deployments unmatched, saying why",
		func(d bosh.Deployment, manifest string, reasons ...string) {
			var man *Manifest
			if manifest != "" {
				man = manifestOf(manifest)
			}
			_, ok, reason := m.Match(d, man)
			Expect(ok).To(BeFalse())
			for _, r := range reasons {
				Expect(reason).To(ContainSubstring(r))
			}
		},
		Entry("nothing at all", deployment("cf"), "name: cf",
			"name: no trailing instance UUID", "metadata: no properties.blacksmith",
			"release: no release maps to a service", "rule: no rule matches the name"),
		Entry("UUID with an unknown plan", deployment("nosuch-"+uuid1), "",
			`name: "nosuch" is not a plan id of the catalog`, "metadata: no manifest"),
		Entry("metadata without instance id", deployment("x"), "properties: {blacksmith: {plan_id: redis-small}}",
			"metadata: properties.blacksmith has no instance_id"),
		Entry("metadata without plan or service", deployment("x"), "properties: {blacksmith: {instance_id: i1}}",
			"metadata: properties.blacksmith has no plan_id nor service_id"),
		Entry("metadata naming a plan the catalog does not know", deployment("x"),
			"properties: {blacksmith: {service_id: other, plan_id: p9, instance_id: i9}}",
			`metadata: plan_id "p9" is not in the catalog`),
		Entry("metadata naming a plan of another service", deployment("x"),
			"properties: {blacksmith: {service_id: kafka, plan_id: redis-small, instance_id: i9}}",
			`metadata: plan "redis-small" is of service "redis", not "kafka"`),
		Entry("metadata naming a service the catalog does not know", deployment("x"),
			"properties: {blacksmith: {service_id: other, instance_id: i9}}",
			`metadata: service_id "other" is not in the catalog`),
		Entry("metadata with a plan id of 20,020 characters, invisible and markup ones among them", deployment("x"),
			"properties: {blacksmith: {service_id: redis, plan_id: \"<b>\u202E\u2028"+strings.Repeat("p", 20013)+"\", instance_id: i9}}",
			"metadata: its plan_id is not one the broker could have written"),
		Entry("mapped release without UUID", deployment("redis-main", "redis"), "",
			"release: redis maps to service redis but the name has no trailing instance UUID"),
		Entry("a rule must match the whole name", deployment("xkafka-42"), "", "rule: no rule matches the name"),
		Entry("metadata naming an instance id that cannot name Vault documents", deployment("x"),
			"properties: {blacksmith: {plan_id: redis-small, instance_id: ../../sys/policy}}",
			`metadata: "../../sys/policy" cannot be an instance id`),
		Entry("an instance id with a space at one end", deployment("x"),
			"properties: {blacksmith: {plan_id: redis-small, instance_id: ' i1'}}",
			`metadata: " i1" cannot be an instance id`),
		Entry("an instance id with a zero-width space", deployment("x"),
			"properties: {blacksmith: {plan_id: redis-small, instance_id: \"i1\\u200B\"}}",
			`metadata: "i1\u200b" cannot be an instance id: not made of ASCII`),
		Entry("an instance id with a line separator", deployment("x"),
			"properties: {blacksmith: {plan_id: redis-small, instance_id: \"i\\u20281\"}}",
			`metadata: "i\u20281" cannot be an instance id`),
		Entry("an instance id with inner spaces", deployment("x"),
			"properties: {blacksmith: {plan_id: redis-small, instance_id: 'my instance'}}",
			`metadata: "my instance" cannot be an instance id`),
		Entry("a reserved instance id", deployment("x"),
			"properties: {blacksmith: {plan_id: redis-small, instance_id: blacksmith}}",
			`metadata: "blacksmith" cannot be an instance id: reserved`),
		Entry("an instance id past 255 characters", deployment("x"),
			"properties: {blacksmith: {plan_id: redis-small, instance_id: "+strings.Repeat("a", 256)+"}}",
			"cannot be an instance id: longer than 255 characters"),
		Entry("a deployment name with a right-to-left override", deployment("redis-small-"+uuid1+"\u202e"), "",
			`deployment name "redis-small-`+uuid1+`\u202e" cannot be recorded`),
		Entry("a deployment name with a zero-width space, matched by its metadata", deployment("x\u200b"),
			"properties: {blacksmith: {plan_id: redis-small, instance_id: i1}}",
			`deployment name "x\u200b" cannot be recorded: not made of ASCII`),
	)

	It("tells which names strategy 1 matches on its own", func() {
		got, ok := m.ByName("redis-small-" + uuid1)
		Expect(ok).To(BeTrue())
		Expect(got.InstanceID).To(Equal(uuid1))
		_, ok = m.ByName("unknown-" + uuid1)
		Expect(ok).To(BeFalse())
		_, ok = m.ByName("redis-small")
		Expect(ok).To(BeFalse())
	})

	DescribeTable("refuses bad rules",
		func(r config.Rule, want string) {
			_, err := New(testCatalog, config.ReconcilerConfig{Rules: []config.Rule{r}})
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("bad regexp", config.Rule{Pattern: `(?P<instance>[`}, "reconciler.rules[0]: compiling pattern"),
		Entry("no instance group", config.Rule{Pattern: `(?P<plan>.+)`}, "needs a named group (?P<instance>...)"),
		Entry("no plan group nor plan id", config.Rule{Pattern: `x-(?P<instance>.+)`}, "unless plan_id is set"),
		Entry("a pattern that would close the anchoring group", config.Rule{Pattern: `x)|(?P<instance>.+`, PlanID: "redis-small"}, "invalid regexp"),
		Entry("a service the catalog lacks", config.Rule{Pattern: `x-(?P<plan>.+)-(?P<instance>.+)`, ServiceID: "kafak"},
			`reconciler.rules[0].service_id: service "kafak" is not in the catalog`),
		Entry("a plan the catalog lacks", config.Rule{Pattern: `x-(?P<instance>.+)`, PlanID: "kafka-xl"},
			`reconciler.rules[0].plan_id: "kafka-xl" is no plan id or name of the catalog`),
		Entry("a plan of another service", config.Rule{Pattern: `x-(?P<instance>.+)`, ServiceID: "kafka", PlanID: "redis-small"},
			`reconciler.rules[0].plan_id: "redis-small" is no plan id or name of service "kafka"`),
	)

	It("names every release and rule whose service or plan the catalog lacks, at once", func() {
		_, err := New(testCatalog, config.ReconcilerConfig{
			Releases: map[string]string{"redis": "rediss", "postgres": "postgresql", "kafka": "nosuch"},
			Rules:    []config.Rule{{Pattern: `(?P<instance>.+)`, PlanID: "big"}, {Pattern: `(?P<instance>.+)`, PlanID: "huge"}},
		})
		Expect(err).To(HaveOccurred())
		Expect(strings.Split(err.Error(), "\n")).To(Equal([]string{
			`reconciler.releases.kafka: service "nosuch" is not in the catalog`,
			`reconciler.releases.redis: service "rediss" is not in the catalog`,
			`reconciler.rules[1].plan_id: "huge" is no plan id or name of the catalog`,
		}))
		_, err = New(nil, config.ReconcilerConfig{Releases: map[string]string{"redis": "rediss"}})
		Expect(err).NotTo(HaveOccurred(), "without a catalog there is nothing to check against")
	})
})

var _ = Describe("Refine", func() {
	It("takes the plan from properties.blacksmith only when the matcher would take it", func() {
		m, err := New(testCatalog, testMatchConfig)
		Expect(err).NotTo(HaveOccurred())
		named := report.Match{InstanceID: uuid1, ServiceID: "redis", PlanID: "redis-small", Strategy: report.StrategyName, Confidence: ConfidenceName}
		Expect(m.Refine(named, &Props{InstanceID: uuid1, PlanID: "redis-large"}).PlanID).To(Equal("redis-large"))
		Expect(m.Refine(named, &Props{InstanceID: uuid1, PlanID: "p9"})).To(Equal(named), "a plan the catalog does not know")
		Expect(m.Refine(named, &Props{InstanceID: uuid1, PlanID: "redis-large", ServiceID: "\u202Eevil"})).To(Equal(named))
	})
})

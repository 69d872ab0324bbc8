package catalog_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

const schemaPlan = `id: redis-small
name: small
description: Small
schemas:
  service_instance:
    create:
      parameters:
        type: object
        additionalProperties: false
        required: [size]
        properties:
          size: {type: integer, minimum: 1, maximum: 8}
          name: {type: string, maxLength: 10, pattern: "^[a-z]+$"}
    update:
      parameters:
        type: object
        additionalProperties: false
        properties:
          size: {type: integer, minimum: 1, maximum: 8}
  service_binding:
    create:
      parameters:
        type: object
        additionalProperties: false
        properties:
          role: {enum: [read, write]}
`

// loadPlan loads good with the small plan's plan.yml replaced.
func loadPlan(planYML string) catalog.Plan {
	GinkgoHelper()
	c, err := catalog.Load(good.with(tree{"redis/small/plan.yml": planYML}).write())
	Expect(err).NotTo(HaveOccurred())
	_, p, ok := c.Plan("redis-small")
	Expect(ok).To(BeTrue())
	return p
}

func paramProblems(err error) []string {
	GinkgoHelper()
	var pe *catalog.ParameterError
	Expect(errors.As(err, &pe)).To(BeTrue(), "want *catalog.ParameterError, got %v", err)
	return pe.Problems
}

var _ = Describe("plan parameter schemas", func() {
	It("keeps the documents for the OSB catalog", func() {
		p := loadPlan(schemaPlan)
		Expect(p.Schemas.InstanceCreate.Document()).To(HaveKeyWithValue("required", []any{"size"}))
		Expect(p.Schemas.InstanceUpdate).NotTo(BeNil())
		Expect(p.Schemas.BindingCreate.Document()).To(HaveKey("properties"))
	})

	DescribeTable("check parameters, naming the parameter and the rule",
		func(op catalog.Operation, params, merged map[string]any, want ...string) {
			err := loadPlan(schemaPlan).CheckParameters(op, params, merged)
			if len(want) == 0 {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			got := strings.Join(paramProblems(err), "\n")
			for _, w := range want {
				Expect(got).To(ContainSubstring(w))
			}
		},
		Entry("valid", catalog.Provision, map[string]any{"size": 2.0, "name": "db"}, nil),
		Entry("required missing", catalog.Provision, map[string]any{}, nil, "parameters: missing property 'size'"),
		Entry("too big", catalog.Provision, map[string]any{"size": 9.0}, nil, "size: ", "8"),
		Entry("wrong type", catalog.Provision, map[string]any{"size": "2"}, nil, "size: ", "integer"),
		Entry("unknown parameter", catalog.Provision, map[string]any{"size": 1.0, "hba_entries": []any{"x"}}, nil, "hba_entries"),
		Entry("pattern", catalog.Provision, map[string]any{"size": 1.0, "name": "A\nB"}, nil, "name: "),
		Entry("update schema, not create's", catalog.Update, map[string]any{"size": 3.0}, map[string]any{"size": 3.0}),
		Entry("update schema refuses", catalog.Update, map[string]any{"name": "x"}, nil, "name"),
		Entry("bind enum", catalog.Bind, map[string]any{"role": "admin"}, nil, "role: "),
		Entry("bind valid", catalog.Bind, map[string]any{"role": "read"}, nil),
	)

	It("checks an update against the create schema, merged, when there is no update schema", func() {
		i, j := strings.Index(schemaPlan, "    update:"), strings.Index(schemaPlan, "  service_binding:")
		p := loadPlan(schemaPlan[:i] + schemaPlan[j:])
		Expect(p.Schemas.InstanceUpdate).To(BeNil())
		Expect(paramProblems(p.CheckParameters(catalog.Update, map[string]any{"size": 20.0}, map[string]any{"size": 20.0}))).
			To(ContainElement(ContainSubstring("size")))
		Expect(p.CheckParameters(catalog.Update, map[string]any{"name": "ab"}, map[string]any{"size": 1.0, "name": "ab"})).To(Succeed())
	})

	It("refuses every parameter on a plan without a schema, unless accept_any_parameters", func() {
		p := loadPlan("id: redis-small\nname: small\ndescription: Small\n")
		Expect(p.CheckParameters(catalog.Provision, nil, nil)).To(Succeed())
		Expect(paramProblems(p.CheckParameters(catalog.Provision, map[string]any{"b": 1, "a": 2}, nil))).
			To(Equal([]string{"this plan takes no parameters on provision (got a, b)"}))
		p = loadPlan("id: redis-small\nname: small\ndescription: Small\naccept_any_parameters: true\n")
		Expect(p.CheckParameters(catalog.Bind, map[string]any{"anything": "goes"}, nil)).To(Succeed())
	})

	It("bounds what a refusal says", func() {
		long := strings.Repeat("A", 5000)
		for _, pr := range paramProblems(loadPlan(schemaPlan).CheckParameters(catalog.Provision, map[string]any{"size": 1.0, "name": long}, nil)) {
			Expect(len(pr)).To(BeNumerically("<=", 210))
		}
	})

	DescribeTable("bad schemas name the field",
		func(schemas string, want string) {
			dir := good.with(tree{"redis/small/plan.yml": "id: redis-small\nname: small\ndescription: Small\n" + schemas}).write()
			_, err := catalog.Load(dir)
			Expect(err).To(HaveOccurred())
			Expect(strings.Join(problems(err), "\n")).To(ContainSubstring(want))
		},
		Entry("unknown kind", "schemas:\n  service_thing: {}\n", "schemas.service_thing: unknown field"),
		Entry("unknown operation", "schemas:\n  service_binding:\n    update: {parameters: {}}\n", "schemas.service_binding.update: unknown field"),
		Entry("no parameters key", "schemas:\n  service_instance:\n    create: {type: object}\n", "schemas.service_instance.create: expected a mapping with the single field parameters"),
		Entry("not a schema", "schemas:\n  service_instance:\n    create: {parameters: {type: 12}}\n", "schemas.service_instance.create: parameters: not a valid JSON Schema"),
		Entry("a reference to a file", "schemas:\n  service_instance:\n    create: {parameters: {$ref: \"file:///etc/passwd\"}}\n", "schemas must be self-contained"),
		Entry("a reference to the network", "schemas:\n  service_instance:\n    create: {parameters: {$ref: \"https://schemas.invalid/x.json\"}}\n", "schemas must be self-contained"),
		Entry("not a mapping", "schemas: [a]\n", "schemas: expected a mapping"),
	)
})

var _ = Describe("templates checked when the catalog loads", func() {
	It("reports a manifest that does not render to a YAML mapping with sample data", func() {
		dir := good.with(tree{"redis/small/manifest.yml": "- {{ .DeploymentName }}\n"}).write()
		_, err := catalog.Load(dir)
		Expect(problems(err)).To(ContainElement(And(
			ContainSubstring(filepath.Join(dir, "redis/small/manifest.yml")),
			ContainSubstring("does not render with sample data"))))
	})

	It("reports an unknown function, which the catalog now checks", func() {
		dir := good.with(tree{"redis/small/credentials.yml": "host: {{ nope .Host }}\n"}).write()
		_, err := catalog.Load(dir)
		Expect(strings.Join(problems(err), "\n")).To(ContainSubstring(`function "nope" not defined`))
	})

	It("loads the sample catalog, whose plans declare schemas", func() {
		c, err := catalog.Load(sampleDir)
		Expect(err).NotTo(HaveOccurred())
		for _, s := range c.Services {
			for _, p := range s.Plans {
				Expect(p.Schemas.InstanceCreate).NotTo(BeNil(), p.ID)
				Expect(p.AcceptAnyParameters).To(BeFalse(), p.ID)
			}
		}
		_, err = os.Stat(sampleDir)
		Expect(err).NotTo(HaveOccurred())
	})
})

package manifests_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const (
	baseManifest = "blacksmith.yml"
	exampleVars  = "example-vars.yml"
)

// opsFiles lists the ops files of operations/.
func opsFiles() []string {
	files, err := filepath.Glob("operations/*.yml")
	if err != nil {
		panic(err)
	}
	slices.Sort(files)
	return files
}

// deployment is the base manifest with ops applied in order, as
// `bosh int blacksmith.yml -o OPS...` builds it.
func deployment(ops ...string) (map[string]any, error) {
	var doc any
	readYAML(baseManifest, &doc)
	for _, file := range ops {
		var o []opsOp
		readYAML(file, &o)
		var err error
		if doc, err = applyOps(doc, o); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	manifest, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the manifest is a %T, not a map", doc)
	}
	return manifest, nil
}

// operatorInputs are the values of example-vars.yml, each PEM placeholder
// replaced by a real (generated) CA certificate, since check-config reads them.
func operatorInputs() map[string]any {
	GinkgoHelper()
	var inputs map[string]any
	readYAML(exampleVars, &inputs)
	for name, v := range inputs {
		if s, ok := v.(string); ok && strings.Contains(s, "-----BEGIN CERTIFICATE-----") {
			inputs[name] = newCertificate(nil, name, true).cert
		}
	}
	return inputs
}

// interpolated resolves every ((variable)) of manifest: the operator's inputs,
// then what a config server would generate for variables:.
func interpolated(manifest map[string]any) map[string]any {
	GinkgoHelper()
	values := operatorInputs()
	declared := interpolate(map[string]any{"variables": manifest["variables"]}, values).(map[string]any)
	maps.Copy(values, generate(declared))
	return interpolate(manifest, values).(map[string]any)
}

// named finds the item of a manifest list whose name is name.
func named(list any, name string) map[string]any {
	for _, item := range asList(list) {
		if m, ok := item.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	return nil
}

// blacksmithProperties are the properties of the blacksmith job.
func blacksmithProperties(manifest map[string]any) map[string]any {
	GinkgoHelper()
	group := named(manifest["instance_groups"], "blacksmith")
	Expect(group).NotTo(BeNil(), "no instance group blacksmith")
	job := named(group["jobs"], "blacksmith")
	Expect(job).NotTo(BeNil(), "no job blacksmith in the instance group")
	props, _ := job["properties"].(map[string]any)
	return props
}

// undeclared lists the properties props set that the job spec does not
// declare: BOSH would drop them silently.
func undeclared(props map[string]any, spec jobSpec, prefix string) []string {
	var out []string
	for k, v := range props {
		key := prefix + k
		if _, ok := spec.Properties[key]; ok {
			continue
		}
		if sub, ok := v.(map[string]any); ok {
			out = append(out, undeclared(sub, spec, key+".")...)
			continue
		}
		out = append(out, key)
	}
	return out
}

// excludes are ops files that do not go together (the first is left out
// of "every ops file").
var excludes = map[string]string{
	"operations/vault-kv-v1.yml": "operations/ha.yml", // HA needs check-and-set: KV v2
}

// compatible is every ops file but those another one excludes.
func compatible(files []string) []string {
	var out []string
	for _, f := range files {
		if other, ok := excludes[f]; !ok || !slices.Contains(files, other) {
			out = append(out, f)
		}
	}
	return out
}

var _ = Describe("the example deployment (blacksmith.yml, operations/, example-vars.yml)", func() {
	combinations := map[string][]string{"the base manifest": nil, "every ops file": compatible(opsFiles())}
	for _, file := range opsFiles() {
		combinations["the base manifest with "+file] = []string{file}
	}

	for _, name := range slices.Sorted(maps.Keys(combinations)) {
		ops := combinations[name]
		Context(name, func() {
			var manifest map[string]any

			BeforeEach(func() {
				var err error
				manifest, err = deployment(ops...)
				Expect(err).NotTo(HaveOccurred(), "an ops path does not apply")
			})

			It("applies every path of its ops files (bosh int -o)", func() {
				Expect(manifest).To(HaveKeyWithValue("name", "blacksmith"))
			})

			It("leaves no ((variable)) unknown, given example-vars.yml (bosh int --var-errs)", func() {
				var given map[string]any
				readYAML(exampleVars, &given)
				Expect(varProblems(manifest, given)).To(BeEmpty())
			})

			It("sets only properties the blacksmith job declares", func() {
				Expect(undeclared(blacksmithProperties(manifest), loadJobSpec(), "")).To(BeEmpty())
			})

			It("colocates bpm and lists the release of every job", func() {
				for _, g := range asList(manifest["instance_groups"]) {
					group := g.(map[string]any)
					Expect(named(group["jobs"], "bpm")).To(HaveKeyWithValue("release", "bpm"), "instance group %s", group["name"])
					for _, j := range asList(group["jobs"]) {
						release := j.(map[string]any)["release"].(string)
						Expect(named(manifest["releases"], release)).NotTo(BeNil(), "release %s", release)
					}
					Expect(named(manifest["stemcells"], "")).To(BeNil())
					Expect(manifest["stemcells"]).To(ContainElement(HaveKeyWithValue("alias", group["stemcell"])))
				}
				Expect(manifest).To(HaveKey("update"))
			})

			It("renders to a blacksmith.conf check-config accepts, carrying every property it sets", func() {
				rubyPath()
				props := blacksmithProperties(interpolated(manifest))
				vm := newFakeVM(props)
				vm.expectCarried(loadJobSpec(), props, vm.deploy())
			})
		})
	}

	It("needs every input of example-vars.yml (bosh int --var-errs-unused)", func() {
		used := map[string]bool{}
		for _, ops := range combinations {
			manifest, err := deployment(ops...)
			Expect(err).NotTo(HaveOccurred())
			for _, ref := range varRefs(manifest) {
				name, _, _ := strings.Cut(ref, ".")
				used[name] = true
			}
		}
		var given map[string]any
		readYAML(exampleVars, &given)
		for name := range given {
			Expect(used).To(HaveKey(name), "example-vars.yml gives %s, which nothing uses", name)
		}
	})

	It("does not give values the config server generates", func() {
		manifest, err := deployment(opsFiles()...)
		Expect(err).NotTo(HaveOccurred())
		var given map[string]any
		readYAML(exampleVars, &given)
		for _, v := range variablesOf(manifest) {
			Expect(given).NotTo(HaveKey(v.Name))
		}
	})
})

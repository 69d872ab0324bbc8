package manifests_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const (
	baseManifest   = "blacksmith.yml"
	exampleVarsDir = "example-vars" // one vars file per part of the deployment
	basicAuthOps   = "operations/director-basic-auth.yml"
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

// varsFiles are the example vars files an operator passes with ops, by the
// rule of docs/bosh-release.md and example-vars/blacksmith.yml: the base manifest's,
// director-uaa.yml unless director-basic-auth.yml is applied (it removes the
// UAA client), and example-vars/X.yml for each ops file operations/X.yml that
// has one.
func varsFiles(ops []string) []string {
	files := []string{filepath.Join(exampleVarsDir, baseManifest)}
	if !slices.Contains(ops, basicAuthOps) {
		files = append(files, filepath.Join(exampleVarsDir, "director-uaa.yml"))
	}
	for _, op := range ops {
		file := filepath.Join(exampleVarsDir, filepath.Base(op))
		if _, err := os.Stat(file); err == nil {
			files = append(files, file)
		}
	}
	return files
}

// givenVars are the values of vars files together, as bosh int -l reads them.
// A name given by two files fails the spec: the later would silently win.
func givenVars(files []string) map[string]any {
	GinkgoHelper()
	given := map[string]any{}
	for _, file := range files {
		var values map[string]any
		readYAML(file, &values)
		for name, v := range values {
			Expect(given).NotTo(HaveKey(name), "%s gives %s again", file, name)
			given[name] = v
		}
	}
	return given
}

// interpolated resolves every ((variable)) of manifest: the operator's inputs
// (each PEM placeholder replaced by a real, generated CA certificate, since
// check-config reads them), then what a config server would generate for
// variables:.
func interpolated(manifest, given map[string]any) map[string]any {
	GinkgoHelper()
	values := maps.Clone(given)
	for name, v := range values {
		if s, ok := v.(string); ok && strings.Contains(s, "-----BEGIN CERTIFICATE-----") {
			values[name] = newCertificate(nil, name, true).cert
		}
	}
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

var _ = Describe("the example deployment (blacksmith.yml, operations/, example-vars/)", func() {
	combinations := map[string][]string{"the base manifest": nil, "every ops file": compatible(opsFiles())}
	for _, file := range opsFiles() {
		combinations["the base manifest with "+file] = []string{file}
	}

	for _, name := range slices.Sorted(maps.Keys(combinations)) {
		ops := combinations[name]
		Context(name, func() {
			var manifest, given map[string]any

			BeforeEach(func() {
				var err error
				manifest, err = deployment(ops...)
				Expect(err).NotTo(HaveOccurred(), "an ops path does not apply")
				given = givenVars(varsFiles(ops))
			})

			It("applies every path of its ops files (bosh int -o)", func() {
				Expect(manifest).To(HaveKeyWithValue("name", "blacksmith"))
			})

			It("leaves no ((variable)) unknown, given its example vars files (bosh int --var-errs)", func() {
				Expect(varProblems(manifest, given)).To(BeEmpty(), "vars files %v", varsFiles(ops))
			})

			It("uses every input its example vars files give (bosh int --var-errs-unused)", func() {
				Expect(unusedVars(manifest, given)).To(BeEmpty(), "vars files %v", varsFiles(ops))
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
				props := blacksmithProperties(interpolated(manifest, given))
				vm := newFakeVM(props)
				vm.expectCarried(loadJobSpec(), props, vm.deploy())
			})
		})
	}

	It("names each example vars file after the base manifest, director-uaa or an ops file", func() {
		files, err := filepath.Glob(filepath.Join(exampleVarsDir, "*"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).To(ContainElement(filepath.Join(exampleVarsDir, baseManifest)))
		for _, file := range files {
			name := filepath.Base(file)
			if name == baseManifest || name == "director-uaa.yml" {
				continue
			}
			Expect(filepath.Join("operations", name)).To(BeAnExistingFile(), "%s is passed with no ops file", file)
		}
	})

	It("does not give values the config server generates", func() {
		manifest, err := deployment(opsFiles()...)
		Expect(err).NotTo(HaveOccurred())
		files, err := filepath.Glob(filepath.Join(exampleVarsDir, "*.yml"))
		Expect(err).NotTo(HaveOccurred())
		given := givenVars(files)
		for _, v := range variablesOf(manifest) {
			Expect(given).NotTo(HaveKey(v.Name))
		}
	})
})

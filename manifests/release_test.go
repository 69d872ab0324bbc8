package manifests_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// packageSpec is a release package's spec file.
type packageSpec struct {
	Name          string   `yaml:"name"`
	Dependencies  []string `yaml:"dependencies"`
	Files         []string `yaml:"files"`
	ExcludedFiles []string `yaml:"excluded_files"`
}

// vendoredPackages come into the release by `bosh vendor-package` (README,
// "Deploy with BOSH"), not from this repository: golang-1-linux from
// cloudfoundry/bosh-package-golang-release.
var vendoredPackages = []string{"golang-1-linux"}

// releasePackages reads the spec of every package of the release, by name.
func releasePackages() map[string]packageSpec {
	GinkgoHelper()
	dirs, err := filepath.Glob(filepath.Join(releaseDir, "packages", "*", "spec"))
	Expect(err).NotTo(HaveOccurred())
	out := map[string]packageSpec{}
	for _, specFile := range dirs {
		var spec packageSpec
		readYAML(specFile, &spec)
		Expect(spec.Name).To(Equal(filepath.Base(filepath.Dir(specFile))), specFile)
		out[spec.Name] = spec
	}
	return out
}

// globMatch matches a slash-separated path against a bosh package glob:
// path.Match per segment, ** for any number of folders.
func globMatch(pattern, name string) bool {
	var match func(p, n []string) bool
	match = func(p, n []string) bool {
		switch {
		case len(p) == 0:
			return len(n) == 0
		case p[0] == "**":
			for i := 0; i <= len(n); i++ {
				if match(p[1:], n[i:]) {
					return true
				}
			}
			return false
		case len(n) == 0:
			return false
		}
		ok, err := path.Match(p[0], n[0])
		return err == nil && ok && match(p[1:], n[1:])
	}
	return match(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

// packageFiles lists the files of srcDir a package spec selects, as bosh
// create-release does: regular files its globs match, minus excluded_files,
// found without going through a symbolic link. unmatched lists globs that
// select nothing.
func packageFiles(srcDir string, spec packageSpec) (files, unmatched []string) {
	GinkgoHelper()
	hits := map[string]int{}
	Expect(filepath.WalkDir(srcDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(srcDir, p)
		rel = filepath.ToSlash(rel)
		selected := false
		for _, g := range spec.Files {
			if globMatch(g, rel) {
				hits[g]++
				selected = true
			}
		}
		for _, g := range spec.ExcludedFiles {
			selected = selected && !globMatch(g, rel)
		}
		if selected {
			files = append(files, rel)
		}
		return nil
	})).To(Succeed())
	for _, g := range spec.Files {
		if hits[g] == 0 {
			unmatched = append(unmatched, g)
		}
	}
	return files, unmatched
}

var _ = DescribeTable("globMatch, bosh's package file globs",
	func(pattern, name string, want bool) { Expect(globMatch(pattern, name)).To(Equal(want)) },
	Entry(nil, "blacksmith/**/*", "blacksmith/go.mod", true),
	Entry(nil, "blacksmith/**/*", "blacksmith/vendor/a/b/c.go", true),
	Entry(nil, "blacksmith/**/*", "other/go.mod", false),
	Entry(nil, "blacksmith/*.go", "blacksmith/cmd/main.go", false),
	Entry(nil, "go*.linux-amd64.tar.gz", "go1.26.1.linux-amd64.tar.gz", true),
)

var _ = Describe("the BOSH release (release/)", func() {
	It("has the layout bosh create-release reads", func() {
		var final struct {
			Name      string `yaml:"name"`
			Blobstore struct {
				Provider string         `yaml:"provider"`
				Options  map[string]any `yaml:"options"`
			} `yaml:"blobstore"`
		}
		readYAML(filepath.Join(releaseDir, "config/final.yml"), &final)
		Expect(final.Name).To(Equal("blacksmith"))
		Expect(final.Blobstore.Provider).NotTo(BeEmpty())

		var blobs map[string]struct {
			Size     int64  `yaml:"size"`
			ObjectID string `yaml:"object_id"`
			SHA      string `yaml:"sha"`
		}
		readYAML(filepath.Join(releaseDir, "config/blobs.yml"), &blobs)
		for name, blob := range blobs {
			Expect(blob.Size).To(BeNumerically(">", 0), name)
			Expect(blob.SHA).NotTo(BeEmpty(), name)
		}
		Expect(filepath.Join(releaseDir, "src")).To(BeADirectory())
		for _, kind := range []string{"jobs", "packages"} {
			dirs, err := os.ReadDir(filepath.Join(releaseDir, kind))
			Expect(err).NotTo(HaveOccurred())
			Expect(dirs).NotTo(BeEmpty(), kind)
			for _, d := range dirs {
				if _, err := os.Stat(filepath.Join(releaseDir, kind, d.Name(), "spec.lock")); kind == "packages" && err == nil {
					continue // vendored by bosh vendor-package: spec.lock only, as a fork records golang-1-linux
				}
				want := map[string][]string{"jobs": {"spec", "monit"}, "packages": {"spec", "packaging"}}[kind]
				for _, f := range want {
					Expect(filepath.Join(releaseDir, kind, d.Name(), f)).To(BeAnExistingFile())
				}
			}
		}
	})

	It("has every package dependency, or vendors it with bosh vendor-package", func() {
		packages := releasePackages()
		for name, spec := range packages {
			packaging, err := os.ReadFile(filepath.Join(releaseDir, "packages", name, "packaging"))
			Expect(err).NotTo(HaveOccurred())
			for _, dep := range spec.Dependencies {
				_, inRelease := packages[dep]
				lock := filepath.Join(releaseDir, "packages", dep, "spec.lock") // what vendor-package writes
				_, lockErr := os.Stat(lock)
				Expect(inRelease || lockErr == nil || slices.Contains(vendoredPackages, dep)).To(BeTrue(),
					"package %s depends on %s, which the release neither has nor vendors", name, dep)
			}
			used := regexp.MustCompile(`/var/vcap/packages\}?/([\w.-]+)/`).FindAllStringSubmatch(string(packaging), -1)
			Expect(len(used)).To(BeNumerically(">=", len(spec.Dependencies)), "packages/%s/packaging uses its dependencies", name)
			for _, m := range used {
				Expect(spec.Dependencies).To(ContainElement(m[1]), "packages/%s/packaging uses package %s", name, m[1])
			}
		}
		Expect(packages["blacksmith"].Dependencies).To(ContainElement("golang-1-linux"))
	})
})

// runScript runs a script with the caller's environment plus extra, and
// waits for it.
func runScript(extra []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), extra...)
	cmd.Stderr = GinkgoWriter
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

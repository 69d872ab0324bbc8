package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packages are the repository's Go packages (directories holding .go
// files), as paths from its root; not a separate module's (ci/vault), nor
// the release's vendored copy.
func packages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "ci/vault" || rel == "manifests/release/src" || rel == "tmp") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !slices.Contains(out, filepath.Dir(rel)) {
			out = append(out, filepath.ToSlash(filepath.Dir(rel)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every package is named in docs/architecture.md's package table (a
// package of reconciler/internal in the reconciler row), so that a package
// added without its line fails here.
func TestEveryPackageIsInTheArchitecture(t *testing.T) {
	raw, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var table, reconcilerRow string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "| `") {
			table += line + "\n"
			if strings.HasPrefix(line, "| `reconciler` |") {
				reconcilerRow = line
			}
		}
	}
	named := func(text, name string) bool {
		return regexp.MustCompile("`" + regexp.QuoteMeta(name) + "[`/ ]").MatchString(text)
	}
	pkgs := packages(t, "../..")
	if len(pkgs) < 30 {
		t.Fatalf("found only %v", pkgs)
	}
	for _, p := range pkgs {
		if inner, ok := strings.CutPrefix(p, "reconciler/internal/"); ok {
			if !named(reconcilerRow, inner) {
				t.Errorf("docs/architecture.md's reconciler row does not name %s", p)
			}
			continue
		}
		if !named(table, p) {
			t.Errorf("docs/architecture.md's package table does not name %s", p)
		}
	}
}

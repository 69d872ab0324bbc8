package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The house's limits, outside tests, anywhere in the tree: no type with
// more than maxMethods methods, no interface with more than maxInterface,
// no file over maxLines lines.
const (
	maxMethods   = 25
	maxInterface = 6
	maxLines     = 400
)

// oversized are what was over the limits when the limits were set (issue
// #40), each with the size it may not grow past: a ratchet. A new one fails;
// one that grows fails; one brought within the limits must leave the list.
// Empty since bosh/sim.Director (133), broker.Broker (106) and vault.Store
// (124 with what it embedded) were split.
var oversized = map[string]int{}

// sizes are the sizes over the limits in the tree under root, by name
// ("type DIR.NAME", "interface DIR.NAME", "file PATH"), and the number of
// methods of every type with methods ("DIR.NAME"). A type's methods are its
// own and those its embedded fields of the same package promote: a part
// embedded is not a part split off.
func sizes(t *testing.T, root string) (over, methods map[string]int) {
	t.Helper()
	fset := token.NewFileSet()
	own := map[string]int{}
	embeds := map[string][]string{} // "DIR.NAME" -> the same package's types it embeds
	over = map[string]int{}
	for _, dir := range packages(t, root) {
		matches, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range matches {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			rel := filepath.ToSlash(filepath.Join(dir, filepath.Base(path)))
			if n := fset.File(f.Pos()).LineCount(); n > maxLines {
				over["file "+rel] = n
			}
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Recv != nil {
						own[dir+"."+receiver(d.Recv.List[0].Type)]++
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						if ts, ok := s.(*ast.TypeSpec); ok {
							if it, ok := ts.Type.(*ast.InterfaceType); ok && len(it.Methods.List) > maxInterface {
								over["interface "+dir+"."+ts.Name.Name] = len(it.Methods.List)
							}
							if st, ok := ts.Type.(*ast.StructType); ok {
								for _, f := range st.Fields.List {
									if len(f.Names) == 0 {
										embeds[dir+"."+ts.Name.Name] = append(embeds[dir+"."+ts.Name.Name], dir+"."+receiver(f.Type))
									}
								}
							}
						}
					}
				}
			}
		}
	}
	methods = map[string]int{}
	var count func(name string, seen map[string]bool) int
	count = func(name string, seen map[string]bool) int {
		if seen[name] {
			return 0
		}
		seen[name] = true
		n := own[name]
		for _, e := range embeds[name] {
			n += count(e, seen)
		}
		return n
	}
	for name := range own {
		methods[name] = count(name, map[string]bool{})
	}
	for name := range embeds {
		methods[name] = count(name, map[string]bool{})
	}
	for name, n := range methods {
		if n > maxMethods {
			over["type "+name] = n
		}
	}
	return over, methods
}

// receiver names a method's receiver type.
func receiver(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiver(t.X)
	case *ast.IndexExpr:
		return receiver(t.X)
	case *ast.IndexListExpr:
		return receiver(t.X)
	case *ast.Ident:
		return t.Name
	}
	return fmt.Sprintf("%T", e)
}

func TestTheHouseStaysWithinItsLimits(t *testing.T) {
	over, methods := sizes(t, "../..")
	if methods["bosh/sim.Director"] == 0 || methods["broker.Broker"] == 0 || methods["vault.Store"] == 0 {
		t.Fatalf("the walk missed a package: %d types with methods", len(methods))
	}
	for _, name := range slices.Sorted(maps.Keys(over)) {
		n := over[name]
		ceiling, known := oversized[name]
		switch {
		case !known:
			t.Errorf("%s is %d, over the limit (types %d methods, interfaces %d, files %d lines): split it", name, n, maxMethods, maxInterface, maxLines)
		case n > ceiling:
			t.Errorf("%s grew to %d, past the %d it had: split it, do not grow it", name, n, ceiling)
		}
	}
	for name, ceiling := range oversized {
		if _, still := over[name]; !still {
			t.Errorf("%s is within the limits now (it was %d): take it off oversized", name, ceiling)
		}
	}
}

// The count sees through embedding: a type that embeds a part of its own
// package has the part's methods too, so a god type cannot shrink by
// wrapping itself.
func TestTheMethodCountSeesEmbeddedParts(t *testing.T) {
	root := t.TempDir()
	var src strings.Builder
	src.WriteString("package p\n\ntype part struct{}\n\ntype Whole struct {\n\tpart\n\tn int\n}\n\ntype Other struct{ *Whole }\n\n")
	for i := range 20 {
		fmt.Fprintf(&src, "func (part) M%d() {}\n", i)
	}
	for i := range 10 {
		fmt.Fprintf(&src, "func (*Whole) W%d() {}\n", i)
	}
	if err := os.MkdirAll(filepath.Join(root, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "p", "p.go"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	over, methods := sizes(t, root)
	if methods["p.part"] != 20 || methods["p.Whole"] != 30 || methods["p.Other"] != 30 {
		t.Fatalf("methods %v, want part 20, Whole 30 (10 + 20 promoted), Other 30", methods)
	}
	if over["type p.Whole"] != 30 || over["type p.Other"] != 30 || over["type p.part"] != 0 {
		t.Fatalf("over %v, want Whole and Other at 30, part within", over)
	}
}

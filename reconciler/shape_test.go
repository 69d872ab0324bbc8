package reconciler_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The reconciler's house stays one a newcomer can live in: no type with
// more than 15 methods, no interface with more than 6, no file (tests
// aside) over 400 lines, and a doc.go in every package, here and under
// internal/.
var _ = Describe("the reconciler's shape", func() {
	It("keeps types, interfaces and files small, and says in each package what it is for", func() {
		fset := token.NewFileSet()
		methods := map[string]int{}
		var problems []string
		packages := map[string]bool{}
		docs := map[string]bool{}
		err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			dir := filepath.Dir(path)
			packages[dir] = true
			if filepath.Base(path) == "doc.go" && f.Doc != nil {
				docs[dir] = true
			}
			if n := fset.File(f.Pos()).LineCount(); n > 400 {
				problems = append(problems, path+" has more than 400 lines")
			}
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Recv != nil {
						methods[dir+"."+receiverName(d.Recv.List[0].Type)]++
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						if ts, ok := s.(*ast.TypeSpec); ok {
							if it, ok := ts.Type.(*ast.InterfaceType); ok && len(it.Methods.List) > 6 {
								problems = append(problems, dir+"."+ts.Name.Name+" is an interface of more than 6 methods")
							}
						}
					}
				}
			}
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		for t, n := range methods {
			if n > 15 {
				problems = append(problems, t+" has more than 15 methods")
			}
		}
		for dir := range packages {
			if !docs[dir] {
				problems = append(problems, dir+" has no doc.go with a package comment")
			}
		}
		Expect(packages).To(HaveKey(filepath.Join("internal", "run")), "the walk reached the run package")
		Expect(problems).To(BeEmpty())
	})
})

// receiverName names a method's receiver type.
func receiverName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverName(t.X)
	case *ast.IndexExpr:
		return receiverName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

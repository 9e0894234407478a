package repo_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoPackageState fails when library code of a released module declares
// a package-level variable: state shared by every Limiter in a process.
// Sentinel errors (errors.New, fmt.Errorf), interface assertions
// (var _ I = ...) and embedded files are values, not state; a table is a function or a
// constant. Test kits (storetest, observetest, httpcheck) are not library
// code.
func TestNoPackageState(t *testing.T) {
	tr := load(t)
	released := releasedPaths(tr)
	for _, f := range tr.Files {
		if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") ||
			strings.Contains("/"+f, "/storetest/") || strings.Contains("/"+f, "/observetest/") || strings.Contains("/"+f, "/httpcheck/") {
			continue
		}
		if !released[moduleOf(tr.Modules, fileImportPath(tr.Modules, f))] {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(tr.Root, filepath.FromSlash(f)), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR || embeds(g) {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if name.Name == "_" || i < len(vs.Values) && isErrorValue(vs.Values[i]) {
						continue
					}
					t.Errorf("%s: package-level variable %s: make it a constant, a function or a field of the value that uses it", f, name.Name)
				}
			}
		}
	}
}

// isErrorValue reports a call to errors.New or fmt.Errorf, or another
// package's ErrX: a sentinel error.
func isErrorValue(e ast.Expr) bool {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		return strings.HasPrefix(sel.Sel.Name, "Err")
	}
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf")
}

// embeds reports a var declaration with a //go:embed directive: an embedded
// file system, read-only.
func embeds(g *ast.GenDecl) bool {
	if g.Doc == nil {
		return false
	}
	for _, c := range g.Doc.List {
		if strings.HasPrefix(c.Text, "//go:embed ") {
			return true
		}
	}
	return false
}

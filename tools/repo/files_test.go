package repo_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ratekit/ratekit/tools/repo"
)

// maxFileSize is the largest file the repository may hold: anything
// bigger is a build output or data that belongs elsewhere.
const maxFileSize = 1 << 20

// TestNoLargeFiles fails when git tracks (or would track) a file over
// 1 MiB, such as a compiled binary.
func TestNoLargeFiles(t *testing.T) {
	tr := load(t)
	for _, f := range tr.Files {
		info, err := os.Lstat(filepath.Join(tr.Root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() > maxFileSize {
			t.Errorf("%s is %d bytes (over 1 MiB): a build output? delete it and ignore it in .gitignore", f, info.Size())
		}
	}
}

// TestNoForeignInternalImports fails when a Go file imports an internal
// package of another module of the repository: modules are released
// together, but a user may upgrade one without the other. A module whose
// path is internal itself (internal/redistest) is there for the others,
// which import it from their tests; no released module may
// (TestReleasedImportOnlyReleased).
func TestNoForeignInternalImports(t *testing.T) {
	tr := load(t)
	for _, f := range tr.Files {
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(tr.Root, filepath.FromSlash(f)), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		from := moduleOf(tr.Modules, fileImportPath(tr.Modules, f))
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !repo.IsOwn(p) || !strings.Contains("/"+p+"/", "/internal/") {
				continue
			}
			if to := moduleOf(tr.Modules, p); to != from && !strings.Contains(to+"/", "/internal/") {
				t.Errorf("%s imports %s, an internal package of module %s: export it where its readers look, or keep it in this module", f, p, to)
			}
		}
	}
}

// TestReleasedImportOnlyReleased fails when a Go file of a released module,
// test files included, imports a package of an unreleased module of the
// repository. A user's go mod tidy loads the tests of the packages the
// user's module imports, so it would look for a module that is never tagged,
// and fail. Tests that need one (those on internal/redistest's servers) live
// in an unreleased module, such as store/redisstore/integration.
func TestReleasedImportOnlyReleased(t *testing.T) {
	tr := load(t)
	released := releasedPaths(tr)
	for _, f := range tr.Files {
		if !strings.HasSuffix(f, ".go") || strings.Contains("/"+f, "/testdata/") {
			continue
		}
		from := moduleOf(tr.Modules, fileImportPath(tr.Modules, f))
		if !released[from] {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(tr.Root, filepath.FromSlash(f)), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !repo.IsOwn(p) {
				continue
			}
			if to := moduleOf(tr.Modules, p); !released[to] {
				t.Errorf("%s, in the released module %s, imports %s, of the unreleased module %s: "+
					"a user's go mod tidy would look for that module and fail; move the file to an unreleased module", f, from, p, to)
			}
		}
	}
}

// releasedPaths maps each module's path to whether it is released.
func releasedPaths(tr repo.Tree) map[string]bool {
	released := map[string]bool{}
	for _, m := range tr.Modules {
		released[m.Path] = m.Released
	}
	return released
}

// TestOneDeclaredVersion: the modules require one another at one release
// version.
func TestOneDeclaredVersion(t *testing.T) {
	tr := load(t)
	v, err := repo.DeclaredVersion(tr.Modules)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the tree declares %s", v)
}

// fileImportPath is the import path of the package that holds file: its
// directory under the deepest module directory above it.
func fileImportPath(mods []repo.Module, file string) string {
	dir := filepath.ToSlash(filepath.Dir(file))
	var best repo.Module
	for _, m := range mods {
		inside := m.Dir == "." || dir == m.Dir || strings.HasPrefix(dir, m.Dir+"/")
		if inside && (best.Path == "" || len(m.Dir) > len(best.Dir)) {
			best = m
		}
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(dir, best.Dir), "/")
	if best.Dir == "." {
		rel = strings.TrimPrefix(dir, ".")
	}
	if rel == "" {
		return best.Path
	}
	return best.Path + "/" + rel
}

// moduleOf returns the path of the repository's module that holds the
// package importPath: the longest module path that prefixes it.
func moduleOf(mods []repo.Module, importPath string) string {
	best := ""
	for _, m := range mods {
		if (importPath == m.Path || strings.HasPrefix(importPath, m.Path+"/")) && len(m.Path) > len(best) {
			best = m.Path
		}
	}
	return best
}

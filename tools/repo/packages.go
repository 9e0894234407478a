package repo

import (
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Packages returns the import paths of the packages module m offers its
// users: the directories of its non-test Go files, outside internal/ and
// testdata/ and nested modules, that are not commands. files are the
// repository's files, as Files returns them.
func Packages(root string, mods []Module, m Module, files []string) ([]string, error) {
	var out []string
	for _, f := range files {
		rel, ok := within(m.Dir, f)
		if !ok || !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") || owner(mods, f) != m.Dir {
			continue
		}
		dir := path.Dir(rel)
		if hidden(dir) {
			continue
		}
		ip := m.Path
		if dir != "." {
			ip += "/" + dir
		}
		if slices.Contains(out, ip) {
			continue
		}
		clause, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, filepath.FromSlash(f)), nil, parser.PackageClauseOnly)
		if err != nil {
			return nil, err
		}
		if clause.Name.Name != "main" {
			out = append(out, ip)
		}
	}
	slices.Sort(out)
	return out, nil
}

// hidden reports whether the package directory dir is not for users:
// internal, testdata or dot and underscore directories.
func hidden(dir string) bool {
	for _, e := range strings.Split(dir, "/") {
		if e == "internal" || e == "testdata" || strings.HasPrefix(e, "_") || strings.HasPrefix(e, ".") && e != "." {
			return true
		}
	}
	return false
}

// owner returns the directory of the module that holds file: the deepest
// module directory above it.
func owner(mods []Module, file string) string {
	best := "."
	for _, m := range mods {
		if _, ok := within(m.Dir, file); ok && m.Dir != "." && len(m.Dir) > len(best) {
			best = m.Dir
		}
	}
	return best
}

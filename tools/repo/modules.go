// Package repo knows the layout of the ratekit repository: its modules,
// which of them are released, the version the tree declares, and how to
// serve the tree as a module proxy. The release command, the API record
// and the repository's own checks are built on it.
//
// It is a development tool: it is not released and no library imports it.
package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/mod/modfile"
)

// RootPath is the module path of the root module; every module of the
// repository has a path under it.
const RootPath = "github.com/ratekit/ratekit"

// Released lists the directories of the library modules, released together
// at one version, in the order their tags are created: each after every
// module it requires.
var Released = []string{
	".",
	"store/redisstore",
	"store/redisstore/rueidisstore",
	"adapters/gin",
	"adapters/echo",
	"adapters/fiber",
	"adapters/grpc",
	"observe/prometheus",
	"observe/otel",
}

// Unreleased lists the directories of the modules that are never tagged:
// examples, tests that span modules or need real servers, the Redis test
// servers (internal/redistest), benchmarks and these tools. No file of a
// released module, test files included, imports one of them: a user's go mod
// tidy loads the tests of the packages it imports, and could not fetch a
// module that is never tagged.
var Unreleased = []string{
	"adapters/paritytest",
	"bench",
	"examples",
	"examples/echo",
	"examples/fiber",
	"examples/gin",
	"examples/grpc",
	"internal/redistest",
	"store/redisstore/integration",
	"tools",
}

// A Module is one module of the repository.
type Module struct {
	Dir      string // relative to the root, slash-separated; "." for the root
	Path     string // module path
	Released bool
	File     *modfile.File // its parsed go.mod
}

// Root returns the repository's root: the nearest directory at or above the
// working directory that holds go.work.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repo: no go.work at or above the working directory")
		}
		dir = parent
	}
}

// Modules returns every module that go.work uses, released ones first in
// tag order. It fails when a module is in neither Released nor Unreleased,
// so that a new module is a decision, not an accident.
func Modules(root string) ([]Module, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	work, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, err
	}
	var used []string
	for _, u := range work.Use {
		used = append(used, filepath.ToSlash(filepath.Clean(u.Path)))
	}
	var out []Module
	for _, dir := range append(slices.Clone(Released), Unreleased...) {
		if !slices.Contains(used, dir) {
			return nil, fmt.Errorf("repo: %s is listed as a module but go.work does not use it", dir)
		}
		m, err := readModule(root, dir)
		if err != nil {
			return nil, err
		}
		m.Released = slices.Contains(Released, dir)
		out = append(out, m)
	}
	for _, dir := range used {
		if !slices.Contains(Released, dir) && !slices.Contains(Unreleased, dir) {
			return nil, fmt.Errorf("repo: go.work uses %s, which is in neither repo.Released nor repo.Unreleased: say whether it is released", dir)
		}
	}
	return out, nil
}

func readModule(root, dir string) (Module, error) {
	name := filepath.Join(root, filepath.FromSlash(dir), "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return Module{}, err
	}
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return Module{}, err
	}
	if f.Module == nil {
		return Module{}, fmt.Errorf("repo: %s has no module line", name)
	}
	return Module{Dir: dir, Path: f.Module.Mod.Path, File: f}, nil
}

// IsOwn reports whether path is the path of a module of this repository.
func IsOwn(path string) bool {
	return path == RootPath || len(path) > len(RootPath) && path[:len(RootPath)+1] == RootPath+"/"
}

// A Tree is the repository as the tools read it: its root, its modules and
// the files git tracks or would track.
type Tree struct {
	Root    string
	Modules []Module
	Files   []string
}

// Load reads the repository that holds the working directory.
func Load() (Tree, error) {
	root, err := Root()
	if err != nil {
		return Tree{}, err
	}
	mods, err := Modules(root)
	if err != nil {
		return Tree{}, err
	}
	files, err := Files(root)
	if err != nil {
		return Tree{}, err
	}
	return Tree{root, mods, files}, nil
}

// Released returns the released modules, in tag order.
func (t Tree) Released() []Module {
	var out []Module
	for _, m := range t.Modules {
		if m.Released {
			out = append(out, m)
		}
	}
	return out
}

// Packages returns the packages module m offers its users (see Packages).
func (t Tree) Packages(m Module) ([]string, error) {
	return Packages(t.Root, t.Modules, m, t.Files)
}

package repo_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit/tools/repo"
)

var installVersion = flag.String("install.version", "", "serve the tree at this version instead of the one it declares")

// TestInstallEveryModule installs each released module alone, as a user
// would: the working tree is served as a module proxy at the version it
// declares, and in a fresh module, outside the workspace, with no replace,
// the test runs go get, builds a program that imports every package of the
// module, and runs go mod tidy and go vet. A module cache of its own keeps
// the tree's stand-in release out of the machine's cache; modules from
// elsewhere come from the machine's cache first, then from GOPROXY.
func TestInstallEveryModule(t *testing.T) {
	tr := load(t)
	version := *installVersion
	if version == "" {
		v, err := repo.DeclaredVersion(tr.Modules)
		if err != nil {
			t.Fatal(err)
		}
		version = v
	}
	proxy := t.TempDir()
	if err := repo.BuildProxy(tr.Root, tr.Modules, version, proxy); err != nil {
		t.Fatal(err)
	}
	env := installEnv(t, proxy)
	for _, m := range tr.Released() {
		t.Run(m.Dir, func(t *testing.T) {
			pkgs, err := tr.Packages(m)
			if err != nil {
				t.Fatal(err)
			}
			if len(pkgs) == 0 {
				t.Fatalf("%s offers no package", m.Path)
			}
			dir := t.TempDir()
			goCmd(t, env, dir, "mod", "init", "example.com/user")
			var src strings.Builder
			src.WriteString("package main\n\nimport (\n")
			for _, p := range pkgs {
				fmt.Fprintf(&src, "\t_ %q\n", p)
			}
			src.WriteString(")\n\nfunc main() {}\n")
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			goCmd(t, env, dir, "get", m.Path+"@"+version)
			goCmd(t, env, dir, "mod", "tidy")
			goCmd(t, env, dir, "vet", "./...")
			goCmd(t, env, dir, "build", "-o", os.DevNull, ".")
			if got := strings.TrimSpace(goCmd(t, env, dir, "list", "-m", "-f", "{{.Version}}", m.Path)); got != version {
				t.Fatalf("%s resolved to %s, want %s", m.Path, got, version)
			}
			t.Logf("%s@%s: installed alone; %d packages built, tidy and vet clean", m.Path, version, len(pkgs))
		})
	}
}

// installEnv is the environment of a user outside the workspace whose
// GOPROXY serves the tree first.
func installEnv(t *testing.T, proxy string) []string {
	t.Helper()
	var upstream, cache string
	for name, dst := range map[string]*string{"GOPROXY": &upstream, "GOMODCACHE": &cache} {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatal(err)
		}
		*dst = strings.TrimSpace(string(out))
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GOWORK", "GOFLAGS", "GOPROXY", "GOMODCACHE", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOTOOLCHAIN":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GOWORK=off",
		"GOFLAGS=-mod=mod -modcacherw",
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(cache, "cache", "download"))+","+upstream,
		"GOMODCACHE="+t.TempDir(),
		"GONOSUMDB="+repo.RootPath, // the stand-in release is in no checksum database
		"GOTOOLCHAIN=local",
	)
}

// goCmd runs the go command in dir and returns its standard output; it
// fails the test with everything the command printed.
func goCmd(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	t.Logf("go %s (%.1fs)", strings.Join(args, " "), time.Since(start).Seconds())
	return stdout.String()
}

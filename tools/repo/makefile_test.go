package repo_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ratekit/ratekit/tools/repo"
)

// TestMakefileModules: make test, make lint and make bench walk the
// Makefile's MODULES, which must list every module go.work uses but bench
// (make bench-peers runs it): a module left out would go untested, in CI
// too.
func TestMakefileModules(t *testing.T) {
	tr := load(t)
	data, err := os.ReadFile(filepath.Join(tr.Root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(string(data), "\n") {
		if name, value, ok := strings.Cut(line, ":="); ok && strings.TrimSpace(name) == "MODULES" {
			listed = strings.Fields(value)
		}
	}
	if listed == nil {
		t.Fatal("the Makefile sets no MODULES")
	}
	for _, m := range tr.Modules {
		switch in := slices.Contains(listed, m.Dir); {
		case m.Dir == "bench" && in:
			t.Errorf("the Makefile's MODULES lists bench, which pulls in the peers: make bench-peers runs it")
		case m.Dir != "bench" && !in:
			t.Errorf("the Makefile's MODULES does not list %s: make test would not test it, nor CI", m.Dir)
		}
	}
	for _, dir := range listed {
		if !slices.ContainsFunc(tr.Modules, func(m repo.Module) bool { return m.Dir == dir }) {
			t.Errorf("the Makefile's MODULES lists %s, which go.work does not use", dir)
		}
	}
}

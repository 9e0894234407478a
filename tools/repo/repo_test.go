package repo_test

import (
	"testing"

	"github.com/ratekit/ratekit/tools/repo"
)

// tree is the repository under test: its root, modules and files.
type tree struct {
	root  string
	mods  []repo.Module
	files []string
}

func load(t *testing.T) tree {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	mods, err := repo.Modules(root)
	if err != nil {
		t.Fatal(err)
	}
	files, err := repo.Files(root)
	if err != nil {
		t.Fatal(err)
	}
	return tree{root, mods, files}
}

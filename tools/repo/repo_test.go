package repo_test

import (
	"testing"

	"github.com/ratekit/ratekit/tools/repo"
)

// load reads the repository under test.
func load(t *testing.T) repo.Tree {
	t.Helper()
	tr, err := repo.Load()
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

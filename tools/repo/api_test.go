package repo_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ratekit/ratekit/tools/repo"
)

// TestAPI fails when the exported API of a released module differs from
// its record in api/: every API change is then a reviewed diff of that
// file (make api writes it) and a line of CHANGELOG.md.
func TestAPI(t *testing.T) {
	tr := load(t)
	for _, m := range tr.Released() {
		t.Run(m.Dir, func(t *testing.T) {
			pkgs, err := tr.Packages(m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := repo.API(tr.Root, m, pkgs)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(tr.Root, repo.APIFile(m)))
			if err != nil {
				t.Fatalf("%v: run make api and commit %s", err, repo.APIFile(m))
			}
			want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			var diff []string
			for _, l := range got {
				if !slices.Contains(want, l) {
					diff = append(diff, "+ "+l)
				}
			}
			for _, l := range want {
				if !slices.Contains(got, l) {
					diff = append(diff, "- "+l)
				}
			}
			if len(diff) > 0 {
				t.Fatalf("the exported API of %s is not what %s records:\n%s\n"+
					"if the change is meant, run make api, review the diff of %s and name the change in CHANGELOG.md",
					m.Path, repo.APIFile(m), strings.Join(diff, "\n"), repo.APIFile(m))
			}
			t.Logf("%s: %d features, as recorded", m.Path, len(got))
		})
	}
}

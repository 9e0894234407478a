// Command apirecord writes the exported API of every released module of
// ratekit to api/<module>.txt (make api). Review the diff it makes: every
// line added or removed is an API change, and CHANGELOG.md names it.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ratekit/ratekit/tools/repo"
)

func main() {
	if err := record(); err != nil {
		fmt.Fprintln(os.Stderr, "apirecord:", err)
		os.Exit(1)
	}
}

func record() error {
	tree, err := repo.Load()
	if err != nil {
		return err
	}
	root := tree.Root
	for _, m := range tree.Released() {
		pkgs, err := tree.Packages(m)
		if err != nil {
			return err
		}
		lines, err := repo.API(root, m, pkgs)
		if err != nil {
			return err
		}
		name := filepath.Join(root, repo.APIFile(m))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d features\n", repo.APIFile(m), len(lines))
	}
	return nil
}

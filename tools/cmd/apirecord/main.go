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
	root, err := repo.Root()
	if err != nil {
		return err
	}
	mods, err := repo.Modules(root)
	if err != nil {
		return err
	}
	files, err := repo.Files(root)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if !m.Released {
			continue
		}
		pkgs, err := repo.Packages(root, mods, m, files)
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

package ratekit_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadme checks that every ```go block of README.md is compiled code:
// each must appear, line for line, in a .go file of the repository (a
// program under examples/readme, an example app, or an Example function),
// so that the README cannot drift from the API. Common leading indentation
// is removed from the block and from the lines it is compared with, and
// blank lines at the ends of a block are ignored.
func TestReadme(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(string(readme))
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```go block")
	}
	files := goFiles(t, ".")
	for _, b := range blocks {
		found := ""
		for _, f := range files {
			if contains(f.lines, b.lines) {
				found = f.path
				break
			}
		}
		if found == "" {
			t.Fatalf("README.md line %d: this ```go block is in no .go file of the repository "+
				"(put it in a program under examples/readme, or quote compiled code exactly):\n%s",
				b.line, strings.Join(b.lines, "\n"))
		}
		t.Logf("README.md line %d: %s", b.line, found)
	}
}

// block is a ```go block of the README: its first line's number and its
// lines, dedented and without blank lines at the ends.
type block struct {
	line  int
	lines []string
}

// goBlocks returns the ```go blocks of markdown.
func goBlocks(markdown string) []block {
	var out []block
	var cur *block
	for i, l := range strings.Split(markdown, "\n") {
		fence := strings.TrimSpace(l)
		switch {
		case cur == nil && fence == "```go":
			cur = &block{line: i + 2}
		case cur != nil && fence == "```":
			cur.lines = dedent(trimBlank(cur.lines))
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		}
	}
	return out
}

// goFile is a .go file of the repository, split into lines.
type goFile struct {
	path  string
	lines []string
}

// goFiles returns every .go file under root, skipping hidden directories
// (.git) and testdata.
func goFiles(t *testing.T, root string) []goFile {
	t.Helper()
	var out []goFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out = append(out, goFile{path: path, lines: strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// contains reports whether want, a dedented block, appears in lines as
// consecutive lines that equal it once their own common indentation is
// removed.
func contains(lines, want []string) bool {
	if len(want) == 0 {
		return false
	}
	first := strings.TrimLeft(want[0], " \t")
	for i := 0; i+len(want) <= len(lines); i++ {
		if strings.TrimLeft(lines[i], " \t") != first {
			continue
		}
		if equal(dedent(lines[i:i+len(want)]), want) {
			return true
		}
	}
	return false
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// trimBlank drops blank lines at both ends.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// dedent removes the longest leading whitespace common to the non-blank
// lines, trims trailing whitespace, and turns blank lines into empty ones.
func dedent(lines []string) []string {
	prefix, first := "", true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = indent, false
			continue
		}
		for !strings.HasPrefix(indent, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		out[i] = strings.TrimRight(strings.TrimPrefix(l, prefix), " \t")
	}
	return out
}

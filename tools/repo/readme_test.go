package repo_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadme keeps README.md honest. Each ```go block is either
//
//   - a complete program (after its doc comment, it starts with "package
//     main") equal to some examples/**/main.go, or
//   - an excerpt followed, within the next 3 lines, by a markdown link to a
//     .go file that holds the block's lines consecutively (common leading
//     indentation and trailing spaces aside).
//
// Every relative link of README.md must name a file that exists.
func TestReadme(t *testing.T) {
	t.Chdir(load(t).Root)
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	blocks := goBlocks(readme)
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```go block")
	}
	programs := mainFiles(t, "examples")
	for _, blk := range blocks {
		if err := checkBlock(blk, programs); err != "" {
			t.Errorf("README.md line %d: %s:\n%s", blk.line, err, strings.Join(blk.lines, "\n"))
		}
	}
	for _, target := range relativeLinks(readme) {
		if _, err := os.Stat(target); err != nil {
			t.Errorf("README.md links to %s, which does not exist", target)
		}
	}
}

// block is a ```go block of the README: its first line's number, its lines
// (dedented, without blank lines at the ends) and the 3 lines after its
// closing fence.
type block struct {
	line  int
	lines []string
	after string
}

// checkBlock returns why blk breaks the rule of TestReadme, or "".
func checkBlock(blk block, programs map[string][]string) string {
	switch {
	case len(blk.lines) == 0:
		return "this block is empty"
	case isProgram(blk.lines):
		for _, lines := range programs {
			if slices.Equal(lines, blk.lines) {
				return ""
			}
		}
		return "this program is no examples/**/main.go (copy it there, or copy that file here)"
	}
	targets := goLinks(blk.after)
	if len(targets) == 0 {
		return "this excerpt is not followed within 3 lines by a link to the .go file it comes from"
	}
	for _, target := range targets {
		if src, err := os.ReadFile(target); err == nil && contains(splitLines(string(src)), blk.lines) {
			return ""
		}
	}
	return "no linked file (" + strings.Join(targets, ", ") + ") holds this excerpt"
}

// isProgram reports whether lines are a whole Go file of package main: the
// first line that is not a comment is its package clause.
func isProgram(lines []string) bool {
	for _, l := range lines {
		if !strings.HasPrefix(l, "//") {
			return l == "package main"
		}
	}
	return false
}

// goBlocks returns the ```go blocks of markdown.
func goBlocks(markdown string) []block {
	lines := strings.Split(markdown, "\n")
	var out []block
	start := -1
	for i, l := range lines {
		switch fence := strings.TrimSpace(l); {
		case start < 0 && fence == "```go":
			start = i + 1
		case start >= 0 && fence == "```":
			after := lines[i+1 : min(i+4, len(lines))]
			out = append(out, block{start + 1, dedent(trimBlank(lines[start:i])), strings.Join(after, "\n")})
			start = -1
		}
	}
	return out
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// relativeLinks returns the targets of the markdown links of text that are
// paths in this repository, without their #fragment.
func relativeLinks(text string) []string {
	var out []string
	for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
		target, _, _ := strings.Cut(m[1], "#")
		if target != "" && !strings.Contains(target, "://") && !strings.HasPrefix(target, "mailto:") {
			out = append(out, filepath.FromSlash(target))
		}
	}
	return out
}

// goLinks returns the relative links of text to .go files.
func goLinks(text string) []string {
	var out []string
	for _, target := range relativeLinks(text) {
		if strings.HasSuffix(target, ".go") {
			out = append(out, target)
		}
	}
	return out
}

// mainFiles returns every main.go under root, by path, as lines.
func mainFiles(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "main.go" {
			return err
		}
		src, err := os.ReadFile(path)
		out[path] = dedent(trimBlank(splitLines(string(src))))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func splitLines(s string) []string {
	return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
}

// contains reports whether want, a dedented block, appears in lines as
// consecutive lines that equal it once dedented themselves.
func contains(lines, want []string) bool {
	for i := 0; i+len(want) <= len(lines); i++ {
		if strings.TrimSpace(lines[i]) == strings.TrimSpace(want[0]) &&
			slices.Equal(dedent(lines[i:i+len(want)]), want) {
			return true
		}
	}
	return false
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
		if strings.TrimSpace(l) != "" {
			out[i] = strings.TrimRight(strings.TrimPrefix(l, prefix), " \t")
		}
	}
	return out
}

package repo

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// BuildProxy writes, under dir, a module proxy (GOPROXY=file://dir) that
// serves every released module of mods at version, made from the working
// tree as it would be released if it were committed now: the files git
// tracks or would track (not ignored ones), each module without its nested
// modules, zipped by the same code as the Go module proxy's.
func BuildProxy(root string, mods []Module, version, dir string) error {
	files, err := Files(root)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if !m.Released {
			continue
		}
		if err := serveModule(root, m, version, files, dir); err != nil {
			return fmt.Errorf("repo: serving %s: %w", m.Path, err)
		}
	}
	return nil
}

func serveModule(root string, m Module, version string, files []string, dir string) error {
	escaped, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	at := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	var zipFiles []modzip.File
	for _, f := range files {
		rel, ok := within(m.Dir, f)
		if ok {
			zipFiles = append(zipFiles, treeFile{root: root, path: f, rel: rel})
		}
	}
	var zip bytes.Buffer
	if err := modzip.Create(&zip, module.Version{Path: m.Path, Version: version}, zipFiles); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.Dir), "go.mod"))
	if err != nil {
		return err
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`+"\n", version, time.Now().UTC().Format(time.RFC3339))
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(info),
		version + ".mod":  gomod,
		version + ".zip":  zip.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// within returns file's path relative to the module directory dir, if the
// file is under it.
func within(dir, file string) (string, bool) {
	if dir == "." {
		return file, true
	}
	if strings.HasPrefix(file, dir+"/") {
		return file[len(dir)+1:], true
	}
	return "", false
}

// Files returns the slash-separated paths, relative to root, of the files
// git tracks or would track (untracked files that are not ignored), that
// still exist.
func Files(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("repo: git ls-files in %s: %w", root, err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f))); err != nil {
			continue // deleted in the working tree
		}
		files = append(files, path.Clean(f))
	}
	return files, nil
}

// treeFile is a file of the working tree, as the module zip sees it.
type treeFile struct{ root, path, rel string }

func (f treeFile) Path() string { return f.rel }

func (f treeFile) Lstat() (os.FileInfo, error) {
	return os.Lstat(filepath.Join(f.root, filepath.FromSlash(f.path)))
}

func (f treeFile) Open() (io.ReadCloser, error) {
	return os.Open(filepath.Join(f.root, filepath.FromSlash(f.path)))
}

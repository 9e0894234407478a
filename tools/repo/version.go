package repo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// DeclaredVersion returns the version at which the tree's modules require
// one another: the version the tree is about to be (or was last) released
// at. Every such requirement must name the same release version (one on an
// unreleased module too, which a replace resolves), and a released module
// may require only released modules.
func DeclaredVersion(mods []Module) (string, error) {
	released := map[string]bool{}
	for _, m := range mods {
		if m.Released {
			released[m.Path] = true
		}
	}
	var versions []string
	for _, m := range mods {
		for _, r := range m.File.Require {
			if !IsOwn(r.Mod.Path) {
				continue
			}
			v := r.Mod.Version
			if m.Released && !released[r.Mod.Path] {
				return "", fmt.Errorf("repo: %s is released and requires %s, which is not", m.Dir, r.Mod.Path)
			}
			if !semver.IsValid(v) || module.IsPseudoVersion(v) || semver.Build(v) != "" {
				return "", fmt.Errorf("repo: %s requires %s %s: not a release version (run the release command's -set)", m.Dir, r.Mod.Path, v)
			}
			if !slices.Contains(versions, v) {
				versions = append(versions, v)
			}
		}
	}
	switch len(versions) {
	case 0:
		return "", fmt.Errorf("repo: no module requires another: no declared version")
	case 1:
		return versions[0], nil
	}
	return "", fmt.Errorf("repo: the modules require one another at several versions (%s): they are released together, at one", strings.Join(versions, ", "))
}

// SetVersion rewrites every go.mod of mods so that each requirement of a
// module of the repository names version, and returns the files it changed.
func SetVersion(root string, mods []Module, version string) ([]string, error) {
	if !semver.IsValid(version) || semver.Canonical(version) != version || module.IsPseudoVersion(version) {
		return nil, fmt.Errorf("repo: %q is not a release version like v1.2.3", version)
	}
	var changed []string
	for _, m := range mods {
		dirty := false
		for _, r := range m.File.Require {
			if IsOwn(r.Mod.Path) && r.Mod.Version != version {
				if err := m.File.AddRequire(r.Mod.Path, version); err != nil {
					return changed, err
				}
				dirty = true
			}
		}
		if !dirty {
			continue
		}
		m.File.Cleanup()
		data, err := m.File.Format()
		if err != nil {
			return changed, err
		}
		name := filepath.Join(root, filepath.FromSlash(m.Dir), "go.mod")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return changed, err
		}
		changed = append(changed, filepath.ToSlash(filepath.Join(m.Dir, "go.mod")))
	}
	return changed, nil
}

// TagName is the tag of module m at version: the version for the root
// module, else its directory, a slash and the version.
func TagName(m Module, version string) string {
	if m.Dir == "." {
		return version
	}
	return m.Dir + "/" + version
}

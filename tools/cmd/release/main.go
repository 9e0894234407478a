// Command release releases every library module of ratekit together at one
// version:
//
//	go run ./tools/cmd/release v0.2.0        (or: make release VERSION=v0.2.0)
//
// It checks that the working tree is clean, that no module has the version
// yet and that CHANGELOG.md has a "## vX.Y.Z" section, sets every requirement between the repository's modules to
// the version and commits that, runs make lint and make test, then creates
// one annotated tag per released module, the root module's first and each
// module after those it requires. It pushes nothing: it prints the push
// command. docs/releasing.md is the procedure around it.
//
// With -set it only rewrites the requirements (no commit, no checks, no
// tags); with -skip-checks it does not run make lint and make test (for a
// rehearsal in a scratch clone only).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/ratekit/ratekit/tools/repo"
)

func main() {
	setOnly := flag.Bool("set", false, "only set the requirements between modules to the version")
	skipChecks := flag.Bool("skip-checks", false, "do not run make lint and make test (rehearsals only)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: release [-set] [-skip-checks] vX.Y.Z")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := release(flag.Arg(0), *setOnly, *skipChecks); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func release(version string, setOnly, skipChecks bool) error {
	tree, err := repo.Load()
	if err != nil {
		return err
	}
	root, mods := tree.Root, tree.Modules
	if setOnly {
		changed, err := repo.SetVersion(root, mods, version)
		for _, f := range changed {
			fmt.Println("set", version, "in", f)
		}
		return err
	}
	if out := git(root, "status", "--porcelain"); out.err != nil || out.text != "" {
		return fmt.Errorf("the working tree is not clean (commit or stash first):\n%s%v", out.text, out.err)
	}
	if err := newVersion(root, tree.Released(), version); err != nil {
		return err
	}
	if err := changelogNames(root, version); err != nil {
		return err
	}
	changed, err := repo.SetVersion(root, mods, version)
	if err != nil {
		return err
	}
	if len(changed) > 0 {
		for _, f := range changed {
			fmt.Println("set", version, "in", f)
		}
		args := append([]string{"commit", "-q", "-m", "release " + version + ": the modules require one another at " + version, "--"}, changed...)
		if out := git(root, args...); out.err != nil {
			return fmt.Errorf("git commit: %v\n%s", out.err, out.text)
		}
	}
	if !skipChecks {
		for _, target := range []string{"lint", "test"} {
			cmd := exec.Command("make", target)
			cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stdout, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("make %s failed: fix it and release again (the requirement commit stays; no tag was made): %w", target, err)
			}
		}
	}
	var tags []string
	for _, m := range tree.Released() {
		tag := repo.TagName(m, version)
		if out := git(root, "tag", "-a", tag, "-m", "ratekit "+tag); out.err != nil {
			return fmt.Errorf("git tag %s: %v\n%s(tags made so far: %s; delete them with git tag -d)", tag, out.err, out.text, strings.Join(tags, " "))
		}
		fmt.Println("tagged", tag)
		tags = append(tags, tag)
	}
	fmt.Printf("push with:\n\tgit push origin HEAD %s\n", strings.Join(tags, " "))
	return nil
}

// newVersion checks that version is a release version above every version
// the repository has tagged, and that none of the released modules has it
// yet.
func newVersion(root string, released []repo.Module, version string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version || semver.Build(version) != "" {
		return fmt.Errorf("%q is not a release version like v1.2.3 or v1.2.3-rc.1", version)
	}
	out := git(root, "tag", "--list")
	if out.err != nil {
		return out.err
	}
	tags := strings.Fields(out.text)
	for _, m := range released {
		if contains(tags, repo.TagName(m, version)) {
			return fmt.Errorf("%s is already tagged %s", m.Path, repo.TagName(m, version))
		}
	}
	for _, t := range tags {
		if semver.IsValid(t) && semver.Compare(t, version) >= 0 {
			return fmt.Errorf("%s is not above the released %s", version, t)
		}
	}
	return nil
}

// changelogNames checks that CHANGELOG.md has a section for version: a
// heading "## vX.Y.Z", with anything after the version.
func changelogNames(root, version string) error {
	data, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "##" && f[1] == version {
			return nil
		}
	}
	return fmt.Errorf("CHANGELOG.md has no \"## %s\" section: rename \"## Unreleased\" to it and commit", version)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

type output struct {
	text string
	err  error
}

func git(dir string, args ...string) output {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	return output{string(b), err}
}

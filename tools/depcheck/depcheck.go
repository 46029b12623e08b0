// Package depcheck finds vendored code and Bazel BUILD files that are stale after a Go change.
//
// tools/vendor.sh records a digest of every go.work, go.mod and go.sum in third_party/go/SOURCES
// when it re-vendors; Stale recomputes it. BUILD files are stale when a Go source file in a
// package is not named by the package's BUILD.bazel (gazelle was not re-run after adding it).
package depcheck

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/build/constraint"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SourcesFile is where tools/vendor.sh records the digest of the module files, relative to the root.
const SourcesFile = "third_party/go/SOURCES"

// skipDirs are not scanned: generated, fetched or non-Go trees.
var skipDirs = map[string]bool{
	".git": true, "third_party": true, "testdata": true, "node_modules": true,
}

// ModuleFiles lists, relative to root and sorted, every go.work, go.work.sum, go.mod and go.sum of
// the workspace.
func ModuleFiles(root string) ([]string, error) {
	var files []string
	err := walk(root, func(rel string, d fs.DirEntry) {
		switch d.Name() {
		case "go.work", "go.work.sum", "go.mod", "go.sum":
			files = append(files, rel)
		}
	})
	sort.Strings(files)
	return files, err
}

// Digest is the digest tools/vendor.sh records: sha256 over each module file's path and contents.
func Digest(root string, files []string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// StaleVendor reports why third_party/go does not match the module files, or "" when it does.
func StaleVendor(root string) (string, error) {
	files, err := ModuleFiles(root)
	if err != nil {
		return "", err
	}
	want, err := Digest(root, files)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(root, SourcesFile))
	if os.IsNotExist(err) {
		return SourcesFile + " is missing: run tools/vendor.sh", nil
	}
	if err != nil {
		return "", err
	}
	if got := strings.TrimSpace(string(b)); got != want {
		return fmt.Sprintf("go.work/go.mod/go.sum changed since third_party/go was vendored (%s has %.12s, files give %.12s): run tools/vendor.sh", SourcesFile, got, want[:12]), nil
	}
	return "", nil
}

// StaleBuilds lists Go source files that their directory's BUILD.bazel does not name.
func StaleBuilds(root string) ([]string, error) {
	byDir := map[string][]string{}
	err := walk(root, func(rel string, d fs.DirEntry) {
		if strings.HasSuffix(rel, ".go") {
			byDir[filepath.Dir(rel)] = append(byDir[filepath.Dir(rel)], d.Name())
		}
	})
	if err != nil {
		return nil, err
	}
	var stale []string
	for dir, names := range byDir {
		build, err := os.ReadFile(filepath.Join(root, dir, "BUILD.bazel"))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		for _, n := range names {
			if ignored, err := buildIgnored(filepath.Join(root, dir, n)); err != nil {
				return nil, err
			} else if ignored {
				continue
			}
			if !strings.Contains(string(build), `"`+n+`"`) {
				stale = append(stale, filepath.Join(dir, n))
			}
		}
	}
	sort.Strings(stale)
	return stale, nil
}

// buildIgnored reports whether a Go file is left out of every build by a `//go:build ignore`
// constraint (a generator run with go run, as gazelle leaves it out too).
func buildIgnored(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "//") && !constraint.IsGoBuild(line):
			continue
		case constraint.IsGoBuild(line):
			expr, err := constraint.Parse(line)
			if err != nil {
				return false, nil
			}
			// Ignored when false with "ignore" unset, whether the other tags are all set or
			// all unset (so `//go:build !cuda` still counts).
			all := expr.Eval(func(tag string) bool { return tag != "ignore" })
			none := expr.Eval(func(string) bool { return false })
			return !all && !none, nil
		}
		return false, nil // past the header: no constraint
	}
	return false, sc.Err()
}

// walk calls fn for every regular file under root outside skipDirs, ignored Bazel output links and
// folders listed in .bazelignore, with its path relative to root.
func walk(root string, fn func(rel string, d fs.DirEntry)) error {
	ignored, err := bazelIgnored(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (skipDirs[d.Name()] || ignored[rel] || strings.HasPrefix(d.Name(), "bazel-") || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			fn(rel, d)
		}
		return nil
	})
}

func bazelIgnored(root string) (map[string]bool, error) {
	ignored := map[string]bool{}
	f, err := os.Open(filepath.Join(root, ".bazelignore"))
	if os.IsNotExist(err) {
		return ignored, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); line != "" && !strings.HasPrefix(line, "#") {
			ignored[filepath.Clean(line)] = true
		}
	}
	return ignored, s.Err()
}

package depcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the repository root. The test runs with `go test` from tools/depcheck (tools/test.sh does
// so); under Bazel the target is tagged manual, since a Bazel test sees only its declared inputs.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.work")); err != nil {
		t.Fatalf("repository root not found from %s: %v", r, err)
	}
	return r
}

func TestVendorIsFresh(t *testing.T) {
	why, err := StaleVendor(root(t))
	if err != nil {
		t.Fatal(err)
	}
	if why != "" {
		t.Fatal(why)
	}
}

func TestBuildFilesAreFresh(t *testing.T) {
	stale, err := StaleBuilds(root(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("BUILD.bazel files do not name these Go files: run tools/vendor.sh\n  %s", strings.Join(stale, "\n  "))
	}
}

// The checks must be able to fail: a scratch tree with a changed go.mod and an unlisted file.
func TestChecksCatchStaleness(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.work", "go 1.26\nuse ./m\n")
	write("m/go.mod", "module m\n")
	write("m/a.go", "package m\n")
	write("m/BUILD.bazel", `go_library(srcs = ["a.go"])`)
	files, _ := ModuleFiles(dir)
	d, err := Digest(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	write(SourcesFile, d+"\n")
	if why, _ := StaleVendor(dir); why != "" {
		t.Fatalf("fresh tree reported stale: %s", why)
	}
	if stale, _ := StaleBuilds(dir); len(stale) != 0 {
		t.Fatalf("fresh tree reported stale BUILD files: %v", stale)
	}
	write("m/go.mod", "module m\n\nrequire x v1.0.0\n")
	write("m/b.go", "package m\n")
	if why, _ := StaleVendor(dir); why == "" {
		t.Fatal("a changed go.mod was not caught")
	}
	if stale, _ := StaleBuilds(dir); len(stale) != 1 || stale[0] != filepath.Join("m", "b.go") {
		t.Fatalf("unlisted m/b.go not caught: %v", stale)
	}
}

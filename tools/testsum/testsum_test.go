package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBazelCounts(t *testing.T) {
	logs := t.TempDir()
	writeXML := func(target, body string) {
		dir := filepath.Join(logs, targetPath(target))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "test.xml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeXML("//a:a_test", `<testsuites><testsuite><testcase name="A"/><testcase name="B"/><testcase name="C"><skipped/></testcase></testsuite></testsuites>`)
	writeXML("//b/c:c_test", `<testsuites><testsuite><testcase name="X"><failure>boom</failure></testcase><testcase name="Y"/></testsuite></testsuites>`)
	log := strings.Join([]string{
		"INFO: Build completed",
		"//a:a_test                     (cached) PASSED in 0.3s",
		"//b/c:c_test                   FAILED in 1.2s",
		"//d:d_test                     FAILED TO BUILD",
		"//e:e_test                     NO STATUS",
		"//f:f_test                     PASSED in 0.1s",
		"//g:cuda_test                  SKIPPED",
	}, "\n")
	c, err := bazelCounts(strings.NewReader(log), logs)
	if err != nil {
		t.Fatal(err)
	}
	// a: 2 passed (1 skipped); c: 1 passed 1 failed; d, e: 1 failed each; f: no XML, 1 passed.
	if want := (Counts{Passed: 4, Failed: 3}); c != want {
		t.Fatalf("got %v, want %v", c, want)
	}
}

func TestGoCounts(t *testing.T) {
	in := `{"Action":"run","Package":"p","Test":"T1"}
{"Action":"pass","Package":"p","Test":"T1"}
{"Action":"pass","Package":"p","Test":"T1/sub"}
{"Action":"fail","Package":"p","Test":"T2"}
{"Action":"fail","Package":"p"}
{"Action":"output","Package":"q","Output":"PASS\n"}
{"Action":"output","Package":"q","Output":"goleak: Errors on successful test run\n"}
{"Action":"fail","Package":"q"}
{"Action":"pass","Package":"r"}
`
	var report strings.Builder
	c, err := goCounts(strings.NewReader(in), &report)
	if err != nil {
		t.Fatal(err)
	}
	// T1, T1/sub passed; T2 failed; package q failed with no test (build error).
	if want := (Counts{Passed: 2, Failed: 2}); c != want {
		t.Fatalf("got %v, want %v", c, want)
	}
	if got := c.String(); got != "2 passed, 2 failed" {
		t.Fatalf("summary line %q", got)
	}
	// q's failure is named with its output; p's is named by its test already
	if want := "FAIL q with no failing test; its last output:\nPASS\ngoleak: Errors on successful test run\n"; report.String() != want {
		t.Fatalf("report %q, want %q", report.String(), want)
	}
}

// Command testsum counts test cases across a `bazel test` run and `go test -json` runs and prints
// the one summary line CI reads: "N passed, N failed".
//
//	testsum -bazel-log bazel.log -testlogs bazel-testlogs [-go-json go.json ...]
//
// Test cases come from each Bazel target's test.xml; a target that failed to build, timed out
// without a report or has no status counts as one failed case. It exits 1 when anything failed.
package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Counts are test-case totals.
type Counts struct{ Passed, Failed int }

func (c *Counts) add(o Counts) { c.Passed += o.Passed; c.Failed += o.Failed }

func (c Counts) String() string { return fmt.Sprintf("%d passed, %d failed", c.Passed, c.Failed) }

// targetLine matches Bazel's per-target summary, e.g. "//libs/planner:planner_test  (cached) PASSED in 0.4s".
var targetLine = regexp.MustCompile(`^(//\S+|@\S+)\s+(?:\(cached\)\s+)?(PASSED|FAILED|FAILED TO BUILD|TIMEOUT|NO STATUS|FLAKY|INCOMPLETE|SKIPPED)\b`)

type junit struct {
	Cases  []junitCase `xml:"testcase"`
	Suites []junit     `xml:"testsuite"`
}

type junitCase struct {
	Name    string    `xml:"name,attr"`
	Failure *struct{} `xml:"failure"`
	Error   *struct{} `xml:"error"`
	Skipped *struct{} `xml:"skipped"`
}

func (j junit) counts() Counts {
	var c Counts
	for _, tc := range j.Cases {
		switch {
		case tc.Failure != nil || tc.Error != nil:
			c.Failed++
		case tc.Skipped == nil:
			c.Passed++
		}
	}
	for _, s := range j.Suites {
		c.add(s.counts())
	}
	return c
}

// bazelCounts reads Bazel's summary from log and each target's test.xml under testlogs.
func bazelCounts(log io.Reader, testlogs string) (Counts, error) {
	var total Counts
	s := bufio.NewScanner(log)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		m := targetLine.FindStringSubmatch(strings.TrimSpace(s.Text()))
		if m == nil {
			continue
		}
		target, status := m[1], m[2]
		var c Counts
		if status != "FAILED TO BUILD" && status != "NO STATUS" && status != "SKIPPED" {
			c = xmlCounts(filepath.Join(testlogs, targetPath(target), "test.xml"))
		}
		switch status {
		case "PASSED", "FLAKY":
			if c.Passed+c.Failed == 0 {
				c.Passed = 1
			}
		case "SKIPPED":
			// Incompatible with this configuration (for example CUDA-only targets): not run.
		default:
			if c.Failed == 0 {
				c.Failed = 1
			}
		}
		total.add(c)
	}
	return total, s.Err()
}

// targetPath turns //a/b:c into a/b/c, the layout of bazel-testlogs.
func targetPath(label string) string {
	label = strings.TrimPrefix(label, "//")
	pkg, name, _ := strings.Cut(label, ":")
	return filepath.Join(pkg, name)
}

func xmlCounts(path string) Counts {
	b, err := os.ReadFile(path)
	if err != nil {
		return Counts{}
	}
	var j junit
	if err := xml.Unmarshal(b, &j); err != nil {
		return Counts{}
	}
	return j.counts()
}

// goCounts counts test results in `go test -json` output: each test or subtest that passes or fails.
// A package that fails without any failing test (a build error, a panic at init, goleak's check
// after the tests, output after PASS) counts as one failure; its last lines of package-level
// output go to report, so that the log names what failed.
func goCounts(r io.Reader, report io.Writer) (Counts, error) {
	const keep = 30
	var c Counts
	failedTests := map[string]int{}
	tail := map[string][]string{} // package -> its last lines of output outside any test
	dec := json.NewDecoder(r)
	for {
		var ev struct{ Action, Package, Test, Output string }
		if err := dec.Decode(&ev); err == io.EOF {
			break
		} else if err != nil {
			return c, err
		}
		switch {
		case ev.Test == "" && ev.Action == "output":
			t := append(tail[ev.Package], ev.Output)
			if len(t) > keep {
				t = t[len(t)-keep:]
			}
			tail[ev.Package] = t
		case ev.Test != "" && ev.Action == "pass":
			c.Passed++
		case ev.Test != "" && ev.Action == "fail":
			c.Failed++
			failedTests[ev.Package]++
		case ev.Test == "" && ev.Action == "fail" && failedTests[ev.Package] == 0:
			c.Failed++
			fmt.Fprintf(report, "FAIL %s with no failing test; its last output:\n%s", ev.Package, strings.Join(tail[ev.Package], ""))
		}
	}
	return c, nil
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	bazelLog := flag.String("bazel-log", "", "file with the output of `bazel test`")
	testlogs := flag.String("testlogs", "bazel-testlogs", "Bazel's test log folder")
	var goJSON multi
	flag.Var(&goJSON, "go-json", "file with `go test -json` output (repeatable)")
	flag.Parse()

	var total Counts
	if *bazelLog != "" {
		f, err := os.Open(*bazelLog)
		if err != nil {
			fatal(err)
		}
		c, err := bazelCounts(f, *testlogs)
		f.Close()
		if err != nil {
			fatal(err)
		}
		total.add(c)
	}
	for _, p := range goJSON {
		f, err := os.Open(p)
		if err != nil {
			fatal(err)
		}
		c, err := goCounts(f, os.Stderr)
		f.Close()
		if err != nil {
			fatal(err)
		}
		total.add(c)
	}
	fmt.Println(total)
	if total.Failed > 0 {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "testsum:", err)
	os.Exit(2)
}

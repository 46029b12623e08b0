package app

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/planner"
)

func TestReorder(t *testing.T) {
	a := newApp(Streams{})
	for _, tc := range []struct{ in, want []string }{
		{[]string{"e"}, []string{"e"}},
		{[]string{"e", "bogus", "x", "--y"}, []string{"e", "bogus", "x", "--y"}},
		{[]string{"e", "solve", "f.csv", "--capacity", "10", "-o", "out.csv"}, []string{"e", "solve", "--capacity", "10", "-o", "out.csv", "--", "f.csv"}},
		{[]string{"e", "solve", "--capacity=10", "f.csv"}, []string{"e", "solve", "--capacity=10", "--", "f.csv"}},
		{[]string{"e", "solve", "-", "--format", "json"}, []string{"e", "solve", "--format", "json", "--", "-"}},
		{[]string{"e", "solve", "--", "-odd.csv", "--capacity"}, []string{"e", "solve", "--", "-odd.csv", "--capacity"}},
		{[]string{"e", "report", "--dim", "batch=1", "--help"}, []string{"e", "report", "--dim", "batch=1", "--help"}},
		{[]string{"e", "solve", "f.csv", "--help"}, []string{"e", "solve", "--help"}},
	} {
		got, err := reorder(a, tc.in)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%v", tc.in)
	}
	_, err := reorder(a, []string{"e", "solve", "f.csv", "--capacity"})
	require.EqualError(t, err, "flag needs an argument: --capacity")
}

func TestHelpEverywhere(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"report", "--help"}, {"fit", "--help"}, {"kv", "--help"}, {"solve", "--help"}, {"ops", "-h"}, {"solve", "x.csv", "--help"}} {
		stdout, stderr, code := run(t, args...)
		require.Equal(t, ExitOK, code, "%v: %s", args, stderr)
		require.Contains(t, stdout, "USAGE:", "%v", args)
		require.Empty(t, stderr)
	}
	stdout, _, _ := run(t, "report", "--help")
	for _, flag := range []string{"--model", "--dim", "--budget", "--backend", "--workers", "--format", "--svg", "--top"} {
		require.Contains(t, stdout, flag)
	}
}

func TestSolveRoundTrip(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.csv")
	for _, alg := range planner.Algorithms() {
		stdout, stderr, code := run(t, "solve", "testdata/small.csv", "--algorithm", string(alg), "--format", "json", "-o", out)
		require.Equal(t, ExitOK, code, stderr)
		var sum solveSummary
		require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
		require.Equal(t, string(alg), sum.Algorithm)
		require.GreaterOrEqual(t, sum.PeakBytes, sum.LowerBoundBytes)

		in, err := os.ReadFile("testdata/small.csv")
		require.NoError(t, err)
		prob, err := planner.ReadCSV(bytes.NewReader(in))
		require.NoError(t, err)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		// The same rows come back, with offsets that make a valid plan of the reported peak.
		back, err := planner.ReadCSV(bytes.NewReader(got))
		require.NoError(t, err)
		require.Equal(t, prob, back)
		rows, err := csv.NewReader(bytes.NewReader(got)).ReadAll()
		require.NoError(t, err)
		require.Equal(t, []string{"id", "lower", "upper", "size", "offset"}, rows[0])
		plan := planner.Plan{Peak: sum.PeakBytes}
		for _, r := range rows[1:] {
			off, err := strconv.ParseInt(r[4], 10, 64)
			require.NoError(t, err)
			plan.Offsets = append(plan.Offsets, off)
		}
		require.NoError(t, planner.Verify(prob, plan), "algorithm %s", alg)
	}
}

func TestSolveReadsStdinAndHonoursCapacity(t *testing.T) {
	in, err := os.ReadFile("testdata/small.csv")
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"estimator", "solve", "-", "--capacity", "21"},
		Streams{Stdin: bytes.NewReader(in), Stdout: &stdout, Stderr: &stderr})
	require.Equal(t, ExitOK, code, stderr.String())
	require.True(t, strings.HasPrefix(stdout.String(), "id,lower,upper,size,offset\n"))
	require.Contains(t, stderr.String(), "peak 21 B (21 bytes), lower bound 21 bytes, proven optimal")

	_, errOut, code := run(t, "solve", "testdata/small.csv", "--capacity", "20")
	require.Equal(t, ExitDoesNotFit, code)
	require.Contains(t, errOut, "the buffers need at least 21 bytes")
}

// TestProgressOnlyOnATerminal: fit draws its progress on stderr when stderr is a terminal,
// and never otherwise; stdout is the same either way.
func TestProgressOnlyOnATerminal(t *testing.T) {
	args := []string{"estimator", "fit", "--workers", "2", "--budget", "16MiB", "--dim", "batch=?", "--dim", "seq=64"}
	var plainOut, plainErr, termOut, termErr bytes.Buffer
	require.Equal(t, ExitOK, Main(context.Background(), args, Streams{Stdout: &plainOut, Stderr: &plainErr}))
	require.Equal(t, ExitOK, Main(context.Background(), args, Streams{Stdout: &termOut, Stderr: &termErr, StderrTerminal: true}))
	require.Empty(t, plainErr.String())
	require.Contains(t, termErr.String(), "searching batch")
	require.Equal(t, plainOut.String(), termOut.String())
}

func TestSVGFromReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.svg")
	_, stderr, code := run(t, "report", "--workers", "2", "--svg", path)
	require.Equal(t, ExitOK, code, stderr)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "<svg "))
	require.Contains(t, string(b), "bundled:gpt2 at batch=4 seq=128, the worst binding of batch=1:4 seq=1:128")
	require.Contains(t, string(b), "peak step 54")
}

// FuzzReorder: reordering keeps every token, keeps the flags in order and the positional
// arguments in order, and is idempotent.
func FuzzReorder(f *testing.F) {
	for _, s := range []string{"solve f.csv --capacity 10 -o x", "report --dim batch=1 --dim", "solve -- -a --b", "fit --budget=1GiB x y", "solve f --help", "solve - --format json"} {
		f.Add(s)
	}
	a := newApp(Streams{})
	f.Fuzz(func(t *testing.T, s string) {
		args := append([]string{"estimator"}, strings.Fields(s)...)
		out, err := reorder(a, args)
		if err != nil {
			require.Contains(t, err.Error(), "flag needs an argument")
			return
		}
		if len(args) < 2 || (args[1] != "solve" && args[1] != "report" && args[1] != "fit" && args[1] != "ops") {
			require.Equal(t, args, out)
			return
		}
		help := false
		for _, x := range out {
			help = help || x == "--help" || x == "-h" || x == "-help"
		}
		strip := func(xs []string) []string {
			var r []string
			for _, x := range xs {
				if x != "--" {
					r = append(r, x)
				}
			}
			return r
		}
		if !help {
			require.ElementsMatch(t, strip(args), strip(out), "%q -> %q", args, out)
		}
		require.Equal(t, args[:2], out[:2])
		again, err := reorder(a, out)
		require.NoError(t, err)
		require.Equal(t, out, again, "idempotent: %q", args)
	})
}

// The table words a CUDA target's sizes for people; the JSON keeps the exact form --target
// reads back.
func TestTargetRow(t *testing.T) {
	for _, tc := range []struct{ target, row, json string }{
		{"h200", "sm_90, 132 SMs, 227.00 KiB shared memory per block, 139.80 GiB memory", "sm_90:132:227KiB:146591680KiB"},
		{"sm_80:108:163KiB", "sm_80, 108 SMs, 163.00 KiB shared memory per block", "sm_80:108:163KiB"},
	} {
		stdout, stderr, code := run(t, "report", "--target", tc.target, "--dim", "batch=1", "--dim", "seq=8")
		require.Equal(t, ExitOK, code, stderr)
		require.Regexp(t, `(?m)^target +`+regexp.QuoteMeta(tc.row)+`$`, stdout)
		require.NotContains(t, stdout, "KiB:", "no exact --target form in the table")
		stdout, stderr, code = run(t, "report", "--target", tc.target, "--dim", "batch=1", "--dim", "seq=8", "--format", "json")
		require.Equal(t, ExitOK, code, stderr)
		var r struct{ Target string }
		require.NoError(t, json.Unmarshal([]byte(stdout), &r))
		require.Equal(t, tc.json, r.Target)
	}
}

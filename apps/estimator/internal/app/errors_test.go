package app

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/planner"
)

// TestErrorPaths runs every error the estimator reports: each is one line on stderr, with the
// documented exit code, and nothing on stdout unless a report was written before the verdict.
func TestErrorPaths(t *testing.T) {
	qwen2 := fixture(t, "qwen2")
	bert := fixture(t, "bert")
	corrupt, err := filepath.Abs("testdata/corrupt.onnx")
	require.NoError(t, err)
	small, bad := "testdata/small.csv", "testdata/bad.csv"
	unsupported := writeFile(t, "foo.onnx", onnxModel("Foo", ""))
	unsupportedMS := writeFile(t, "bar.onnx", onnxModel("Bar", "com.microsoft"))
	missing := filepath.Join(t.TempDir(), "nosuch.onnx")
	dir := t.TempDir()

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		want   []string // substrings of the stderr line
		stdout bool     // a report is written before the error
	}{
		// Usage: the command line is wrong.
		{"no command", nil, ExitUsage, []string{"no command given"}, false},
		{"unknown command", []string{"frobnicate"}, ExitUsage, []string{`unknown command "frobnicate"`, "report, fit, kv, solve and ops"}, false},
		{"unknown flag", []string{"report", "--bogus"}, ExitUsage, []string{"estimator: flag provided but not defined: -bogus (see estimator report --help)"}, false},
		{"flag without value", []string{"report", "--dim"}, ExitUsage, []string{"flag needs an argument", "-dim"}, false},
		{"stray argument", []string{"report", "model.onnx"}, ExitUsage, []string{`takes no arguments, got "model.onnx"`}, false},
		{"bad dim syntax", []string{"report", "--dim", "batch"}, ExitUsage, []string{`bad dim "batch": missing '='`, "name=lo:hi"}, false},
		{"bad dim value", []string{"report", "--dim", "batch=x"}, ExitUsage, []string{`"x" is not an integer`}, false},
		{"empty range", []string{"report", "--dim", "batch=8:2"}, ExitUsage, []string{"empty range: 8 > 2"}, false},
		{"dim given twice", []string{"report", "--dim", "batch=1", "--dim", "batch=2"}, ExitUsage, []string{"given twice"}, false},
		{"unknown dim", []string{"report", "--dim", "tokens=1:8"}, ExitUsage, []string{`unknown dim "tokens"`, "batch, seq"}, false},
		{"missing dim", []string{"report", "--model", qwen2, "--dim", "batch=1:4"}, ExitUsage, []string{`no value for dim "seq"`, "--dim seq="}, false},
		{"no dims for a model", []string{"report", "--model", qwen2}, ExitUsage, []string{`no value for dim "batch", "seq"`}, false},
		{"open dim in report", []string{"report", "--dim", "batch=?"}, ExitUsage, []string{`dim "batch" is open`, "fit"}, false},
		{"budget syntax", []string{"report", "--budget", "80G"}, ExitUsage, []string{`--budget: bad size "80G"`, "GB (powers of 1000) or GiB (powers of 1024)"}, false},
		{"budget unit", []string{"report", "--budget", "80 gigs"}, ExitUsage, []string{`unknown unit "gigs"`, "141GiB"}, false},
		{"format", []string{"report", "--format", "xml"}, ExitUsage, []string{`unknown --format "xml"`, "table or json"}, false},
		{"target", []string{"report", "--target", "cuda-sm90"}, ExitUsage, []string{`--target cuda-sm90: unknown target`, "h200", "sm_XY:SMS:SHARED"}, false},
		{"target syntax", []string{"report", "--target", "sm_90:many:1KiB"}, ExitUsage, []string{`multiprocessor count "many"`}, false},
		{"workers", []string{"report", "--workers", "-1"}, ExitUsage, []string{"--workers -1"}, false},
		{"top", []string{"report", "--top", "-3"}, ExitUsage, []string{"--top -3"}, false},
		{"fit without budget", []string{"fit", "--dim", "batch=?"}, ExitUsage, []string{"needs --budget"}, false},
		{"fit without open dim", []string{"fit", "--budget", "1GiB"}, ExitUsage, []string{"no open dim", "--dim batch=?"}, false},
		{"fit with two open dims", []string{"fit", "--budget", "1GiB", "--dim", "batch=?", "--dim", "seq=?"}, ExitUsage, []string{"more than one open dim"}, false},
		{"fit open max syntax", []string{"fit", "--budget", "1GiB", "--dim", "batch=?4"}, ExitUsage, []string{"name=? or name=?:max"}, false},
		{"solve without file", []string{"solve"}, ExitUsage, []string{"takes one CSV file", "got 0"}, false},
		{"solve two files", []string{"solve", small, small}, ExitUsage, []string{"got 2"}, false},
		{"solve algorithm", []string{"solve", small, "--algorithm", "magic"}, ExitUsage, []string{`unknown --algorithm "magic"`, "exact, best, greedy-by-size"}, false},
		{"solve json without -o", []string{"solve", small, "--format", "json"}, ExitUsage, []string{"give -o FILE"}, false},
		{"solve time limit", []string{"solve", small, "--time-limit", "0s"}, ExitUsage, []string{"--time-limit 0s"}, false},
		{"solve time limit syntax", []string{"solve", small, "--time-limit", "soon"}, ExitUsage, []string{"invalid value \"soon\""}, false},
		{"solve capacity syntax", []string{"solve", small, "--capacity", "lots"}, ExitUsage, []string{`--capacity: bad size "lots"`}, false},
		{"ops target", []string{"ops", "--backend", "tpu"}, ExitUsage, []string{`--target tpu: unknown target`, "cpu"}, false},

		// Errors: the input is wrong.
		{"no such model", []string{"report", "--model", missing, "--dim", "batch=1"}, ExitError, []string{"no such file: " + missing, "leave --model out"}, false},
		{"model is a directory", []string{"report", "--model", dir}, ExitError, []string{dir}, false},
		{"corrupt model", []string{"report", "--model", corrupt, "--dim", "batch=1"}, ExitError, []string{corrupt + ": not a usable ONNX model"}, false},
		{"unsupported op", []string{"report", "--model", unsupported, "--dim", "batch=1"}, ExitError,
			[]string{unsupported, `unsupported op Foo (domain ai.onnx, node "the_node")`, "supported: ", "MatMul"}, false},
		{"unsupported contrib op", []string{"report", "--model", unsupportedMS, "--dim", "batch=1"}, ExitError,
			[]string{`unsupported op Bar (domain com.microsoft, node "the_node")`}, false},
		{"binding the model rejects", []string{"report", "--model", bert, "--dim", "batch=1", "--dim", "seq=1:128"}, ExitError,
			[]string{"the model does not admit batch=1 seq=128", `node "node_add_18" (Add)`, "do not broadcast", "narrow the --dim ranges"}, false},
		{"fit where the model rejects the smallest value", []string{"fit", "--model", bert, "--budget", "1GiB", "--dim", "batch=?", "--dim", "seq=100"}, ExitError,
			[]string{"the model does not admit batch=1 seq=100"}, false},
		{"no such csv", []string{"solve", filepath.Join(dir, "nosuch.csv")}, ExitError, []string{"no such file: " + filepath.Join(dir, "nosuch.csv")}, false},
		{"bad csv", []string{"solve", bad}, ExitError, []string{bad + `: csv: line 3, column "upper": "x" is not an integer`}, false},
		{"unwritable output", []string{"solve", small, "-o", filepath.Join(dir, "no", "such", "dir.csv")}, ExitError,
			[]string{"cannot write " + filepath.Join(dir, "no", "such", "dir.csv") + ": no such file or directory"}, false},
		{"unwritable svg", []string{"report", "--svg", filepath.Join(dir, "no", "plan.svg")}, ExitError,
			[]string{"cannot write " + filepath.Join(dir, "no", "plan.svg") + ": no such file or directory"}, false},

		// Does not fit.
		{"report over budget", []string{"report", "--workers", "2", "--budget", "1MiB"}, ExitDoesNotFit,
			[]string{"does not fit: 1.21 MiB (weights 336.66 KiB + arena 898.50 KiB at batch=4 seq=128) exceeds the budget 1.00 MiB by 211.16 KiB"}, true},
		{"fit: not even 1", []string{"fit", "--workers", "2", "--budget", "100KiB", "--dim", "batch=?"}, ExitDoesNotFit,
			[]string{"does not fit: even batch=1 needs", "but the budget is 100.00 KiB"}, true},
		{"solve over capacity", []string{"solve", small, "--capacity", "10"}, ExitDoesNotFit,
			[]string{"does not fit", "the capacity is 10", "raise --capacity"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tc.args...)
			require.Equal(t, tc.code, code, "stderr: %s", stderr)
			line := oneLine(t, stderr)
			for _, w := range tc.want {
				require.Contains(t, line, w)
			}
			if !tc.stdout {
				require.Empty(t, stdout)
			} else {
				require.NotEmpty(t, stdout)
			}
		})
	}
}

// TestExplain covers library errors the fixtures cannot provoke.
func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
		want string
	}{
		{&engine.PlanError{Node: &graph.Node{Name: "n", OpType: "Frob", Domain: "com.example"}, Binding: engine.Binding{"batch": 2},
			Err: &kernels.UnsupportedOpError{Backend: "cpu", Op: kernels.Key("com.example", "Frob"), Node: "n",
				Supported: []kernels.OpKey{kernels.Key("", "Add"), kernels.Key("com.microsoft", "Attention")}}},
			ExitError, `unsupported op Frob (domain com.example, node "n"): backend "cpu" has no kernel for it; supported: Add com.microsoft.Attention (see estimator ops)`},
		{&engine.PlanError{Binding: engine.Binding{"seq": 1 << 40}, Err: &graph.OverflowError{What: "byte size of float32[1099511627776 1099511627776]"}},
			ExitError, "at seq=1099511627776 the sizes overflow int64 (byte size of float32[1099511627776 1099511627776] overflows int64): use smaller dims"},
		{&engine.PlanError{Node: &graph.Node{Name: "mm", OpType: "MatMul"}, Binding: engine.Binding{"b": 1}, Err: errors.New("kernels: inner dims 3 and 4 differ")},
			ExitError, `cannot plan node "mm" (MatMul) at b=1: kernels: inner dims 3 and 4 differ`},
		{&planner.NoFitError{Capacity: 100, LowerBound: 90, Best: planner.Plan{Peak: 120}},
			ExitDoesNotFit, "no plan within the capacity 100 found in the time allowed (best peak 120, lower bound 90); raise --capacity or --time-limit"},
		{&modelError{path: "m.onnx", err: &os.PathError{Op: "open", Path: "m.onnx", Err: os.ErrPermission}},
			ExitError, "cannot read m.onnx: permission denied"},
		{&engine.PlanError{Binding: engine.Binding{"seq": 9}, Err: &planner.ProblemError{Index: 3, ID: "x", Msg: "sizes sum past 4611686018427387904 bytes"}},
			ExitError, "at seq=9 the buffers are too large to plan (sizes sum past 4611686018427387904 bytes; the planner places at most 4611686018427387904 bytes): use smaller dims"},
		{errors.New("something else"), ExitError, "something else"},
	} {
		msg, code := explain(tc.err)
		require.Equal(t, tc.want, msg)
		require.Equal(t, tc.code, code)
	}
}

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"carve.dev/apps/runner/internal/npyfile"
	"carve.dev/libs/alloc"
	acuda "carve.dev/libs/alloc/cuda"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// result is one invocation of the runner.
type result struct {
	code           int
	stdout, stderr string
	// observed are the allocator statistics at close, by stage; empty if no allocator was made.
	observed map[string]alloc.Stats
}

// runner runs the command line args (without the program name) on a 1 GiB CPU device.
func runner(t testing.TB, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	res := result{observed: map[string]alloc.Stats{}}
	env := Env{Stdout: &out, Stderr: &errb, DeviceMemory: 1 << 30,
		Observe: func(stage string, st alloc.Stats) { res.observed[stage] = st }}
	res.code = Main(context.Background(), append([]string{"runner"}, args...), env)
	res.stdout, res.stderr = out.String(), errb.String()
	return res
}

// requireReleased checks what every invocation must leave: no dynamic allocation live when
// the runner closes, and nothing at all in use afterwards.
func requireReleased(t testing.TB, r result) {
	t.Helper()
	if st, ok := r.observed["before-close"]; ok {
		require.Zero(t, st.AllocatedBytes.Current, "dynamic allocations live at close")
		require.Zero(t, st.Allocations.Current)
	}
	if st, ok := r.observed["after-close"]; ok {
		require.Zero(t, st.BytesInUse, "bytes in use after close")
		require.Zero(t, st.ReservedBytes)
		require.Zero(t, st.SegmentBytes.Current)
	}
}

// arrayTensor converts a fixture's reference array to a tensor of dtype dt.
func arrayTensor(t testing.TB, dt graph.DType, a testmodels.Array) kernels.Tensor {
	tn, err := kernels.NewTensor(dt, a.Shape...)
	require.NoError(t, err)
	switch dt {
	case graph.Float32:
		copy(tn.Float32s(), a.Float32)
	case graph.Int64:
		copy(tn.Int64s(), a.Int64)
	case graph.Int32:
		for i, v := range a.Int64 {
			tn.Int32s()[i] = int32(v)
		}
	default:
		t.Fatalf("fixture input dtype %s not handled", dt)
	}
	return tn
}

// writeInputs writes a fixture binding's inputs as .npy files into dir and returns the
// --input arguments.
func writeInputs(t testing.TB, m *graph.Model, b testmodels.Binding, dir string) []string {
	var args []string
	for _, name := range sortedKeys(b.Inputs) {
		a, err := testmodels.ReadArray(b.Inputs[name])
		require.NoError(t, err)
		p := filepath.Join(dir, name+".npy")
		require.NoError(t, npyfile.WriteFile(p, arrayTensor(t, m.Value(name).DType, a)))
		args = append(args, "--input", name+"="+p)
	}
	return args
}

// maxRelErr is max |got-want| / max(1, |want|).
func maxRelErr(got, want []float32) float64 {
	var worst float64
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if r := d / math.Max(1, math.Abs(float64(want[i]))); r > worst || math.IsNaN(r) {
			worst = r
		}
	}
	return worst
}

// envelopeArgs are --dim ranges covering every binding of a fixture.
func envelopeArgs(fx testmodels.Model) []string {
	lo, hi := map[string]int64{}, map[string]int64{}
	for _, b := range fx.Bindings {
		for k, v := range b.Dims {
			if _, ok := lo[k]; !ok || v < lo[k] {
				lo[k] = v
			}
			hi[k] = max(hi[k], v)
		}
	}
	var args []string
	for _, k := range sortedKeys(lo) {
		args = append(args, "--dim", fmt.Sprintf("%s=%d:%d", k, lo[k], hi[k]))
	}
	return args
}

// TestRunFixturesMatchOnnxruntime runs every fixture with bindings through `runner run` with
// onnxruntime's inputs as .npy files and compares the .npy outputs with onnxruntime's.
func TestRunFixturesMatchOnnxruntime(t *testing.T) {
	ran := 0
	for _, fx := range testmodels.Models() {
		if len(fx.Bindings) == 0 {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			model := fx.WriteTemp(t)
			m, err := graph.Load(model)
			require.NoError(t, err)
			defer m.Close()
			for i, b := range fx.Bindings {
				if b.Error != "" {
					continue
				}
				dir := t.TempDir()
				out := filepath.Join(dir, "out")
				args := append([]string{"run", "--model", model, "--out", out, "--format", "json", "--workers", "2"}, envelopeArgs(fx)...)
				args = append(args, writeInputs(t, m, b, dir)...)
				r := runner(t, args...)
				require.Equal(t, 0, r.code, "binding %d: %s", i, r.stderr)
				requireReleased(t, r)
				var rep runReport
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
				for k, v := range b.Dims {
					require.Equal(t, v, rep.Binding[k], "the inputs' shapes give the binding")
				}
				for name, file := range b.Outputs {
					want, err := testmodels.ReadArray(file)
					require.NoError(t, err)
					got, err := npyfile.ReadFile(filepath.Join(out, fileName(name)+".npy"))
					require.NoError(t, err, "output %s", name)
					require.Equal(t, want.Shape, got.Shape, "%s at %v", name, b.Dims)
					require.Equal(t, graph.Float32, got.DType)
					e := maxRelErr(got.Float32s(), want.Float32)
					require.LessOrEqual(t, e, 1e-4, "%s at %v: max relative error %g", name, b.Dims, e)
					ran++
				}
			}
		})
	}
	require.Positive(t, ran)
}

// TestBadInputs checks that every kind of bad input fails with one clear line and the right
// exit code, and leaves nothing allocated.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, dt graph.DType, shape ...int64) string {
		p := filepath.Join(dir, name)
		require.NoError(t, npyfile.WriteFile(p, kernels.MustTensor(dt, shape...)))
		return p
	}
	ids := write("ids.npy", graph.Int64, 2, 8)
	mask := write("mask.npy", graph.Int64, 2, 8)
	ids32 := write("ids32.npy", graph.Int32, 2, 8)
	ids3d := write("ids3d.npy", graph.Int64, 2, 8, 1)
	long := write("long.npy", graph.Int64, 2, 40)
	longMask := write("longmask.npy", graph.Int64, 2, 40)
	fids := write("fids.npy", graph.Float32, 2, 8)
	corrupt := filepath.Join(dir, "corrupt.npy")
	require.NoError(t, os.WriteFile(corrupt, []byte("PK\x03\x04 this is a zip, not a .npy"), 0o644))
	good, err := os.ReadFile(ids)
	require.NoError(t, err)
	truncated := filepath.Join(dir, "truncated.npy")
	require.NoError(t, os.WriteFile(truncated, good[:len(good)-8], 0o644))
	missing := filepath.Join(dir, "nope.npy")
	fifo := filepath.Join(dir, "fifo.npy")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	empty := write("empty.npy", graph.Int64, 2, 0)

	env := []string{"--dim", "batch=1:2", "--dim", "seq=1:16"}
	for _, tc := range []struct {
		name   string
		inputs []string
		code   int
		want   string
	}{
		{"wrong dtype", []string{"input_ids=" + ids32, "attention_mask=" + mask}, 1, `bad input "input_ids": dtype int32, want int64 (from ` + ids32 + ")"},
		{"float ids", []string{"input_ids=" + fids, "attention_mask=" + mask}, 1, `bad input "input_ids": dtype float32, want int64`},
		{"wrong rank", []string{"input_ids=" + ids3d, "attention_mask=" + mask}, 1, `bad input "input_ids": rank 3`},
		{"outside envelope", []string{"input_ids=" + long, "attention_mask=" + longMask}, 1, "seq=40 is outside the declared envelope seq=1:16"},
		{"inconsistent dims", []string{"input_ids=" + ids, "attention_mask=" + longMask}, 1, `bad input "attention_mask"`},
		{"missing input", []string{"input_ids=" + ids}, 2, "missing input attention_mask: give --input attention_mask=FILE.npy"},
		{"unknown input", []string{"input_ids=" + ids, "attention_mask=" + mask, "pixel_values=" + ids}, 2, `unknown input "pixel_values": the model's inputs are input_ids, attention_mask`},
		{"corrupt file", []string{"input_ids=" + corrupt, "attention_mask=" + mask}, 1, `input "input_ids": bad .npy file ` + corrupt + ": not a .npy file"},
		{"truncated file", []string{"input_ids=" + truncated, "attention_mask=" + mask}, 1, "holds 120 data bytes, shape [2 8] of int64 needs 128"},
		{"no such file", []string{"input_ids=" + missing, "attention_mask=" + mask}, 1, `input "input_ids": no such file: ` + missing},
		{"a device", []string{"input_ids=/dev/zero", "attention_mask=" + mask}, 1, `input "input_ids": /dev/zero is not a regular file (a device, FIFO or directory): give a .npy file`},
		{"a fifo", []string{"input_ids=" + fifo, "attention_mask=" + mask}, 1, `input "input_ids": ` + fifo + " is not a regular file"},
		{"zero-size inputs", []string{"input_ids=" + empty, "attention_mask=" + empty}, 1, "seq=0 is outside the declared envelope seq=1:16"},
		{"wrong rank without --dim", []string{"input_ids=" + ids3d, "attention_mask=" + mask}, 1, `bad input "input_ids": rank 3 (shape [2 8 1]), want rank 2`},
		{"zero-size inputs without --dim", []string{"input_ids=" + empty, "attention_mask=" + empty}, 2,
			"dim seq=0 (from --dim or an --input's shape): zero-size tensors are not supported"},
		{"no =", []string{"input_ids", "attention_mask=" + mask}, 2, `--input "input_ids": want name=FILE.npy`},
		{"twice", []string{"input_ids=" + ids, "input_ids=" + ids}, 2, `input "input_ids" is given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run"}, env...)
			if strings.HasSuffix(tc.name, "without --dim") {
				args = []string{"run"}
			}
			for _, in := range tc.inputs {
				args = append(args, "--input", in)
			}
			r := runner(t, args...)
			require.Equal(t, tc.code, r.code, r.stderr)
			require.Empty(t, r.stdout, "nothing on stdout for a failed run")
			require.Contains(t, r.stderr, tc.want)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
			require.True(t, strings.HasPrefix(r.stderr, "runner: "))
			requireReleased(t, r)
		})
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"does not fit", []string{"run", "--dim", "batch=1:8", "--dim", "seq=1:256", "--limit", "64KiB"}, 3,
			"reservation does not fit: the envelope batch=1:8 seq=1:256 needs"},
		{"does not fit two sessions", []string{"run", "--dim", "batch=2", "--dim", "seq=16", "--limit", "150KiB", "--concurrency", "2"}, 3,
			"(2 sessions)"},
		{"bad dim", []string{"run", "--dim", "batch=x"}, 2, `bad dim "batch=x"`},
		{"unknown dim", []string{"run", "--dim", "tokens=3"}, 2, `unknown dim "tokens"`},
		{"open dim", []string{"run", "--dim", "seq=?"}, 2, `dim "seq" is open`},
		{"bad limit", []string{"run", "--limit", "lots"}, 2, `--limit: bad size "lots": no number`},
		{"ambiguous limit", []string{"run", "--limit", "64k"}, 2,
			`--limit: bad size "64k": unit "k" is ambiguous: write KB (powers of 1000) or KiB (powers of 1024) (write e.g. 141GiB, 80GB, 1.5TiB or a number of bytes) (see runner run --help)`},
		{"negative limit", []string{"bench", "--limit", "-1GiB"}, 2, `--limit: bad size "-1GiB": a size cannot be negative`},
		{"bad policy", []string{"run", "--policy", "lenient"}, 2, `--policy "lenient"`},
		{"bad format", []string{"run", "--format", "xml"}, 2, `--format "xml"`},
		{"bad stats", []string{"run", "--stats", "csv"}, 2, `--stats "csv"`},
		{"bad repeat", []string{"run", "--repeat", "0"}, 2, "--repeat 0"},
		{"bad concurrency", []string{"run", "--concurrency", "0"}, 2, "--concurrency 0"},
		{"bad workers", []string{"bench", "--workers", "-1"}, 2, "--workers -1"},
		{"bad runs", []string{"bench", "--runs", "0"}, 2, "--runs 0"},
		{"bad warmup", []string{"bench", "--warmup", "0"}, 2, "--warmup 0"},
		{"bad profile", []string{"bench", "--profile", "0"}, 2, "--profile 0: profile at least one run"},
		{"profile on the cpu", []string{"bench", "--profile", "5"}, 2, "--profile times kernels with the device's timing events: it needs --device cuda (the cpu device has none)"},
		{"cuda", []string{"run", "--device", "cuda"}, 2, "--device cuda:0: this runner was not built with cuda support"},
		{"tpu", []string{"run", "--device", "tpu"}, 2, `unknown device "tpu"`},
		{"unknown flag", []string{"run", "--bogus"}, 2, "flag provided but not defined: -bogus (see runner run --help)"},
		{"not an int", []string{"run", "--repeat", "many"}, 2, "invalid value"},
		{"stray argument", []string{"run", "model.onnx"}, 2, `unexpected argument "model.onnx"`},
		{"unknown command", []string{"walk"}, 2, `unknown command "walk"`},
		{"no command", nil, 2, "no command given"},
		{"help for nothing", []string{"help", "walk"}, 2, "No help topic for 'walk'"},
		{"no model file", []string{"run", "--model", "/nonexistent/m.onnx"}, 1, "/nonexistent/m.onnx"},
		{"not a model", []string{"run", "--model", "testdata/not-a-model.onnx"}, 1, "not-a-model.onnx"},
		{"out is a file", []string{"run", "--out", "testdata/not-a-model.onnx"}, 1, "--out testdata/not-a-model.onnx: cannot create the directory: not a directory"},
		{"out cannot be made", []string{"run", "--out", "/proc/nope/out"}, 1, "--out /proc/nope/out: cannot create the directory"},
		{"model is a directory", []string{"run", "--model", "testdata"}, 1, "--model testdata: is a directory, not a regular file: give the path of an .onnx file"},
		{"model is a device", []string{"run", "--model", "/dev/zero"}, 1, "--model /dev/zero: not a regular file"},
		{"zero limit", []string{"run", "--limit", "0"}, 2, "--limit 0: no arena fits in 0 bytes; leave --limit out"},
		{"bad workspace cap", []string{"bench", "--workspace-cap", "lots"}, 2, `--workspace-cap: bad size "lots"`},
		{"empty limit", []string{"run", "--limit", ""}, 2, `--limit: bad size "": empty size`},
		{"fractional limit", []string{"bench", "--limit", "1.5"}, 2, `--limit: bad size "1.5": 1.5 is not a whole number of bytes`},
		{"zero dim", []string{"run", "--dim", "batch=0"}, 2, "dim batch=0 (from --dim or an --input's shape): zero-size tensors are not supported"},
		{"zero in a range", []string{"run", "--dim", "batch=0:2"}, 2, "dim batch=0"},
		{"binding the model rejects", []string{"run", "--no-fuse", "--dim", "batch=1", "--dim", "seq=1:1000000000"}, 1, "the model does not admit batch=1 seq="}, // exported: seq x seq scores overflow
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runner(t, tc.args...)
			require.Equal(t, tc.code, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
			require.NotContains(t, r.stderr, "graph: ", "no library prefixes")
			require.NotContains(t, r.stderr, "engine: ")
			if tc.code != ExitNoFits && tc.name != "no command" {
				require.Empty(t, r.stdout, "refused before any work")
				require.Zero(t, r.observed["after-close"].NumReserves, "nothing reserved")
			}
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			require.True(t, strings.HasPrefix(lines[len(lines)-1], "runner: "), r.stderr)
			require.Equal(t, 1, strings.Count(lines[len(lines)-1]+"\n", "\n"))
			requireReleased(t, r)
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"bench", "--help"}, {"generate", "--help"}, {"loadtest", "--help"}, {"help", "run"}, {"-h"}} {
		r := runner(t, args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, r.stderr)
		require.Contains(t, r.stdout, "USAGE:")
		name := "help_" + strings.Trim(strings.ReplaceAll(strings.Join(args, "_"), "-", ""), "_") + ".golden"
		golden(t, name, r.stdout)
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(p, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err, "run go test -update to create %s", p)
	require.Equal(t, string(want), got, "%s changed: run go test -update if that is intended", p)
}

func TestRunTableAndStats(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o")
	r := runner(t, "run", "--dim", "batch=1:3", "--dim", "seq=33", "--repeat", "3", "--out", out, "--stats", "table")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr)
	requireReleased(t, r)
	for _, want := range []string{"model     bundled:gpt2", "envelope  batch=1:3 seq=33", "reserved  ", "worst binding batch=3 seq=33",
		"binding   batch=3 seq=33 (random inputs, seed 1)", "logits  float32  [3 33 256]", filepath.Join(out, "logits.npy"),
		"steady  0 device mallocs, 0 device frees, 0 allocator allocations after the first run", "STATISTIC", "engine patterns"} {
		require.Contains(t, r.stdout, want)
	}
	got, err := npyfile.ReadFile(filepath.Join(out, "logits.npy"))
	require.NoError(t, err)
	require.Equal(t, []int64{3, 33, 256}, got.Shape)

	// --stats json: the statistics alone on stdout, the tables on stderr.
	r = runner(t, "run", "--stats", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var st map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.Equal(t, []string{"allocator", "device", "engine", "tight"}, sortedKeys(st))
	// On the CPU no kernel's workspace is a cap: the tight plan saves nothing.
	require.EqualValues(t, 0, st["tight"]["measured_kernels"])
	require.EqualValues(t, 0, st["tight"]["saved_bytes"])
	require.Equal(t, false, st["tight"]["reserved"])
	require.EqualValues(t, 1, st["allocator"]["num_reserves"])
	require.EqualValues(t, 0, st["allocator"]["num_allocs"])
	require.Contains(t, st["engine"], "patterns")
	require.EqualValues(t, 0, st["engine"]["dynamic_workspaces"])
	require.Contains(t, r.stderr, "OUTPUT")
}

func TestRunJSON(t *testing.T) {
	r := runner(t, "run", "--format", "json", "--repeat", "4", "--concurrency", "2", "--policy", "fallback", "--seed", "9")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr)
	var rep runReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.Equal(t, "bundled:gpt2", rep.Model)
	require.Equal(t, "fallback", rep.Policy)
	require.Equal(t, 2, rep.Reservation.Sessions)
	require.Equal(t, 2*rep.Reservation.ArenaBytes, rep.Reservation.TotalArenaBytes)
	require.Positive(t, rep.Reservation.WeightBytes)
	require.Equal(t, map[string]int64{"batch": 2, "seq": 16}, map[string]int64(rep.Binding))
	require.Equal(t, runSummary{Sessions: 2, Repeat: 4}, runSummary{Sessions: rep.Runs.Sessions, Repeat: rep.Runs.Repeat})
	require.Zero(t, rep.Steady.DeviceMallocs)
	require.Zero(t, rep.Steady.Allocs)
	require.Zero(t, rep.Stats.Engine.DynamicWorkspaces)
	require.Len(t, rep.Inputs, 2)
	require.Equal(t, "random (seed 9)", rep.Inputs[0].Source)
	require.Len(t, rep.Outputs, 1)
	require.Equal(t, []int64{2, 16, 256}, rep.Outputs[0].Shape)
	require.NotNil(t, rep.Outputs[0].Min)

	// The raw JSON uses the documented names.
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &raw))
	keys := sortedKeys(raw)
	require.Equal(t, []string{"binding", "device", "graph", "inputs", "model", "outputs", "policy", "reservation", "runs", "stats", "steady_state", "workers"}, keys)
}

// TestConcurrencyMatchesSerialFiles checks through the command line that K concurrent sessions
// write the same bytes as one.
func TestConcurrencyMatchesSerialFiles(t *testing.T) {
	fx := testmodels.MustGet("qwen2")
	model := fx.WriteTemp(t)
	dir := t.TempDir()
	var files [][]byte
	for _, k := range []string{"1", "3"} {
		out := filepath.Join(dir, "k"+k)
		r := runner(t, "run", "--model", model, "--dim", "batch=2", "--dim", "seq=12", "--concurrency", k, "--repeat", "2", "--out", out, "--seed", "4")
		require.Equal(t, 0, r.code, r.stderr)
		b, err := os.ReadFile(filepath.Join(out, "logits.npy"))
		require.NoError(t, err)
		files = append(files, b)
	}
	require.Equal(t, files[0], files[1])
}

// TestDimsFromInputs runs a model file with inputs and no --dim: the inputs' shapes give the
// envelope.
func TestDimsFromInputs(t *testing.T) {
	fx := testmodels.MustGet("llama")
	model := fx.WriteTemp(t)
	m, err := graph.Load(model)
	require.NoError(t, err)
	defer m.Close()
	b := fx.Bindings[1]
	args := append([]string{"run", "--model", model, "--format", "json"}, writeInputs(t, m, b, t.TempDir())...)
	r := runner(t, args...)
	require.Equal(t, 0, r.code, r.stderr)
	var rep runReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.Equal(t, map[string]int64(rep.Binding), b.Dims)
	require.Equal(t, fmt.Sprintf("batch=%d seq=%d", b.Dims["batch"], b.Dims["seq"]), rep.Reservation.Envelope)

	// Without inputs, a model file needs its dims.
	r = runner(t, "run", "--model", model, "--dim", "batch=2")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `no value for dim "seq"`)
}

func TestBenchCommand(t *testing.T) {
	r := runner(t, "bench", "--runs", "12", "--warmup", "1", "--concurrency", "2", "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr, "no progress bar when stderr is not a terminal")
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	for _, k := range []string{"runs", "sessions", "runs_per_second", "latency_ms", "go_allocs_per_run", "device_mallocs_per_run",
		"allocator_allocs_per_run", "stats", "reservation", "binding", "warmup", "wall_seconds"} {
		require.Contains(t, rep, k)
	}
	require.EqualValues(t, 12, rep["runs"])
	require.EqualValues(t, 0, rep["device_mallocs_per_run"])
	lat := rep["latency_ms"].(map[string]any)
	keys := sortedKeys(lat)
	sort.Strings(keys)
	require.Equal(t, []string{"max", "mean", "min", "p50", "p90", "p99"}, keys)
	requireReleased(t, r)

	// On a terminal, a progress bar goes to stderr; the report stays on stdout.
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"runner", "bench", "--runs", "5", "--warmup", "1"},
		Env{Stdout: &out, Stderr: &errb, StderrIsTerminal: true, DeviceMemory: 1 << 30})
	require.Equal(t, 0, code, errb.String())
	require.Contains(t, errb.String(), "bench")
	require.Contains(t, out.String(), "latency ms")
	require.Contains(t, out.String(), "per run")
}

// TestBenchDurationSamples: `bench --duration` times runs for a duration on several sessions,
// and --samples writes a CSV row of memory figures every --sample-every; on the simulated
// device the memory stays flat after the warm-up (the soak test's check, tools/gpu/soak.sh, in
// small). Contradictory or empty flags are usage errors.
func TestBenchDurationSamples(t *testing.T) {
	csvPath := filepath.Join(t.TempDir(), "samples.csv")
	r := runner(t, "bench", "--device", "sim", "--duration", "400ms", "--sample-every", "50ms", "--samples", csvPath,
		"--concurrency", "2", "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.Greater(t, rep["runs"].(float64), 0.0)
	require.GreaterOrEqual(t, rep["wall_seconds"].(float64), 0.4)
	require.EqualValues(t, 0, rep["device_mallocs_per_run"])
	data, err := os.ReadFile(csvPath)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Equal(t, "elapsed_s,runs,segment_bytes,allocated_bytes,arena_bytes,device_mallocs,device_free_bytes,go_heap_bytes", lines[0])
	require.GreaterOrEqual(t, len(lines), 4, "a row every 50ms for 400ms")
	var first []string
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		require.Len(t, f, 8)
		if first == nil {
			first = f
		}
		require.Equal(t, first[2:6], f[2:6], "segments, allocations, arenas and device mallocs stay flat: %s", l)
	}
	requireReleased(t, r)

	for _, args := range [][]string{
		{"--duration", "1s", "--runs", "5"},
		{"--duration", "0s"},
		{"--runs", "5", "--sample-every", "0s"},
	} {
		r := runner(t, append([]string{"bench"}, args...)...)
		require.Equal(t, ExitUsage, r.code, "%v: %s", args, r.stderr)
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"logits": "logits", "present.0.key": "present.0.key", "/model/out:0": "_model_out_0",
		".hidden": "output.hidden", "": "output", "a b": "a_b", "ü": "__",
	} {
		require.Equal(t, want, fileName(in), in)
	}
}

// A cuda build on a host that cannot run --device cuda: the library's typed errors, as the CUDA
// backend returns them (also wrapped, as replicas wrap theirs), worded for people. The errors
// are built here, so the test runs in every build and on every host.
func TestCUDAHostProblems(t *testing.T) {
	noLib := &acuda.NoDriverError{Library: "libcuda.so.1", Reason: "libcuda.so.1: cannot open shared object file: No such file or directory", CUDAVersion: 12040}
	noLibMsg := "--device cuda: no NVIDIA driver found: libcuda.so.1 could not be loaded (libcuda.so.1: cannot open shared object file: No such file or directory); " +
		"install the NVIDIA driver (or add its folder to LD_LIBRARY_PATH), or use --device cpu"
	for _, tc := range []struct {
		name string
		err  error
		code int
		want string
	}{
		{"no driver", noLib, ExitError, noLibMsg},
		{"no driver, wrapped", fmt.Errorf("cuda:1: %w", noLib), ExitError, noLibMsg},
		{"old driver", &acuda.NoDriverError{Library: "libcuda.so.1", Symbol: "cuStreamGetCaptureInfo_v2", CUDAVersion: 12040}, ExitError,
			"--device cuda: the NVIDIA driver is too old: libcuda.so.1 has no cuStreamGetCaptureInfo_v2; this runner needs a driver for CUDA 12.4 or later (or use --device cpu)"},
		{"one GPU", &acuda.NoDeviceError{Ordinal: 1, Count: 1}, ExitUsage, "--device cuda:1: no such GPU; this host has 1 (cuda:0)"},
		{"two GPUs, wrapped", fmt.Errorf("cuda:2: %w", &acuda.NoDeviceError{Ordinal: 2, Count: 2}), ExitUsage,
			"--device cuda:2: no such GPU; this host has 2 (cuda:0, cuda:1)"},
		{"eight GPUs", &acuda.NoDeviceError{Ordinal: 9, Count: 8}, ExitUsage, "--device cuda:9: no such GPU; this host has 8 (cuda:0 to cuda:7)"},
		{"no GPU", &acuda.NoDeviceError{Ordinal: 0, Count: 0}, ExitUsage, "--device cuda:0: no such GPU; this host has none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, code := explain(tc.err)
			require.Equal(t, tc.want, msg)
			require.Equal(t, tc.code, code)
		})
	}
}

func TestExitCodeClassifies(t *testing.T) {
	require.Equal(t, ExitOK, ExitCode(nil))
	require.Equal(t, ExitError, ExitCode(fmt.Errorf("disk full")))
	require.Equal(t, ExitUsage, ExitCode(fmt.Errorf("wrapped: %w", usagef("x"))))
}

// TestDeviceLostWording: a device left unusable ends the runner with exit 1 and the engine's
// message; on CUDA, when the launch did not name the kernel, the message says how to have it
// named.
func TestDeviceLostWording(t *testing.T) {
	cause := errors.New("cuda: cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700)")
	msg, code := explain(fmt.Errorf("session 1: %w", &engine.DeviceLostError{Device: "cuda:0", Err: cause}))
	require.Equal(t, ExitError, code)
	require.Equal(t, "the device cuda:0 is in an unrecoverable state; restart the process: "+cause.Error()+
		" (CUDA reports a kernel's fault at the next synchronize, so the failing kernel is unknown: "+
		"run again with CUDA_LAUNCH_BLOCKING=1 to have its launch report it and name it)", msg)
	n := &graph.Node{Name: "attn", OpType: "Softmax"}
	msg, code = explain(&engine.DeviceLostError{Device: "cuda:0", Node: n, Err: &engine.KernelError{Node: n, Err: cause}})
	require.Equal(t, ExitError, code)
	require.NotContains(t, msg, "CUDA_LAUNCH_BLOCKING")
	require.Contains(t, msg, `"attn" (Softmax)`)
}

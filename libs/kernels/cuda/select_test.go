package cuda

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
)

// launchRec is one launch a program made.
type launchRec struct {
	kernel      string
	grid, block Dim3
	shared      uint32
	args        []Arg
	ptrs        []alloc.Ptr
}

// fakeRun runs inst's program with a recording launcher over tensors at fake device addresses
// (inputs, outputs and workspace 1 MiB apart, 256-byte aligned) and returns the launches.
func fakeRun(t testing.TB, n *kernels.Node, inst kernels.Instance) []launchRec {
	t.Helper()
	next := alloc.Ptr(1 << 40)
	bind := func(vs []kernels.Value) []kernels.Tensor {
		ts := make([]kernels.Tensor, len(vs))
		for i, v := range vs {
			if !v.Present() {
				continue
			}
			ts[i] = kernels.Tensor{DType: v.DType, Shape: v.Shape, Addr: next}
			size, err := kernels.ByteSize(v.DType, v.Shape)
			require.NoError(t, err)
			next += alloc.Ptr((size + (1 << 20)) &^ 255)
		}
		return ts
	}
	in, out := bind(n.Inputs), bind(n.Outputs)
	var ws *alloc.Workspace
	if r := inst.Recipe(); len(r.Parts) > 0 {
		size, err := r.Size()
		require.NoError(t, err)
		ws, err = alloc.Carve(alloc.Region{Ptr: next, Size: size}, r)
		require.NoError(t, err)
	}
	var recs []launchRec
	rec := func(_ alloc.Stream, kernel string, grid, block Dim3, shared uint32, args ...Arg) error {
		recs = append(recs, launchRec{kernel: kernel, grid: grid, block: block, shared: shared, args: slices.Clone(args)})
		return nil
	}
	ci := inst.(*instance)
	for i := range ci.prog {
		if ci.prog[i].call != nil {
			continue // a library call, not a kernel of ours
		}
		require.NoError(t, program{ci.prog[i]}.exec(1, in, out, ws, rec))
	}
	return recs
}

// TestCasesSelect plans every test case for an H200: each selects, and each launch is within
// the launch limits (and, with CARVE_PTX_DIR naming a folder of the kernels' PTX, matches the
// kernel's parameter list).
func TestCasesSelect(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	sigs := ptxSignatures(t)
	seen := map[string]bool{}
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			inst, err := reg.Select(&c.node, h200)
			require.NoError(t, err)
			for _, l := range fakeRun(t, &c.node, inst) {
				seen[l.kernel] = true
				require.True(t, strings.HasPrefix(l.kernel, "carve_"), l.kernel)
				require.LessOrEqual(t, len(l.args), MaxArgs, l.kernel)
				require.NotZero(t, l.grid.X, l.kernel)
				require.LessOrEqual(t, l.grid.Y, uint32(65535), l.kernel)
				require.LessOrEqual(t, l.grid.Z, uint32(65535), l.kernel)
				require.True(t, l.block.X > 0 && l.block.X <= 1024 && l.block.X%32 == 0, "%s block %v", l.kernel, l.block)
				require.LessOrEqual(t, int64(l.shared), h200.SharedMemPerBlock, l.kernel)
				if sigs == nil {
					continue
				}
				want, ok := sigs[l.kernel]
				require.True(t, ok, "kernel %s is not in the PTX", l.kernel)
				got := make([]int, len(l.args))
				for i, a := range l.args {
					got[i] = int(a.size)
				}
				require.Equal(t, want, got, "parameter sizes of %s", l.kernel)
			}
		})
	}
	if sigs != nil {
		var unused []string
		for k := range sigs {
			if !seen[k] && !strings.HasPrefix(k, "carve_gemm") {
				unused = append(unused, k)
			}
		}
		slices.Sort(unused)
		t.Logf("kernels no case launches: %v", unused)
	}
}

// ptxSignatures reads the parameter sizes of every .entry in CARVE_PTX_DIR/*.ptx (nvcc -ptx of
// csrc/*.cu); nil when the variable is unset.
func ptxSignatures(t testing.TB) map[string][]int {
	dir := os.Getenv("CARVE_PTX_DIR")
	if dir == "" {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.ptx"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no PTX in %s", dir)
	entry := regexp.MustCompile(`\.entry\s+(\w+)\(`)
	param := regexp.MustCompile(`\.param\s+\.(\w)(\d+)\s`)
	sigs := map[string][]int{}
	for _, f := range files {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		cur := ""
		for sc.Scan() {
			line := sc.Text()
			if m := entry.FindStringSubmatch(line); m != nil {
				cur = m[1]
				sigs[cur] = []int{}
				continue
			}
			if cur == "" {
				continue
			}
			if m := param.FindStringSubmatch(line); m != nil {
				bits, _ := strconv.Atoi(m[2])
				sigs[cur] = append(sigs[cur], bits/8)
			}
			if strings.HasPrefix(strings.TrimSpace(line), ")") {
				cur = ""
			}
		}
		require.NoError(t, fh.Close())
	}
	return sigs
}

// notOnCUDA are the CPU ops without a CUDA kernel yet.
var notOnCUDA []string

// TestCoverage: every op of the CPU backend has a CUDA kernel, except notOnCUDA.
func TestCoverage(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	have := map[string]bool{}
	for _, o := range reg.Ops(kernels.BackendCUDA) {
		have[o.Op.String()] = true
	}
	var missing []string
	for _, k := range cpu.Kernels() {
		if !have[k.Op().String()] {
			missing = append(missing, k.Op().String())
		}
	}
	slices.Sort(missing)
	require.Equal(t, notOnCUDA, missing)
}

// The op codes and flags of the Go side are those of the kernel sources.
func TestCodesMatchSources(t *testing.T) {
	enum := regexp.MustCompile(`\b([A-Z][A-Z0-9_]+)\s*=\s*(\d+)\b`)
	read := func(file string) map[string]int {
		b, err := os.ReadFile(filepath.Join("csrc", file))
		require.NoError(t, err)
		out := map[string]int{}
		for _, m := range enum.FindAllStringSubmatch(string(b), -1) {
			v, _ := strconv.Atoi(m[2])
			out[m[1]] = v
		}
		return out
	}
	ops := read("ops.cuh")
	for name, code := range ewOpNames {
		require.Equal(t, int(code), ops[name], name)
	}
	require.Len(t, ewOpNames, len(ops))
	red := read("reduce.cu")
	for i, name := range []string{"R_SUM", "R_MEAN", "R_MAX", "R_MIN", "R_PROD", "R_SUMSQ", "R_L1", "R_L2", "R_LSE", "R_ARGMAX", "R_ARGMIN"} {
		require.Equal(t, i, red[name], name)
	}
	att := read("attention.cu")
	for name, v := range map[string]int{"ATT_GQA": attGQA, "ATT_CAUSAL_EXCL": attCausalExcl, "ATT_CAUSAL_ADD": attCausalAdd,
		"ATT_INTERLEAVED": attInterleaved, "ATT_POS_IDS": attPosIDs, "ATT_ROTARY": attRotary,
		"MASK_LENGTHS": 1, "MASK_STARTEND": 2, "MASK_RAW2": 3, "MASK_RAW3": 4,
		"DEC_ROWS": decodeRows, "DEC_WARPS": decodeWarps} {
		require.Equal(t, v, att[name], name)
	}
	rot := read("rotary.cu")
	for name, v := range map[string]int{"ROT_INTERLEAVED": rotInterleaved, "ROT_BSNH": rotBSNH, "ROT_POS_SCALAR": rotPosScalar, "ROT_POS": rotPos} {
		require.Equal(t, v, rot[name], name)
	}
	norm := read("norm.cu")
	for name, v := range map[string]int{"NORM_SIMPLE": normSimple, "NORM_STATS_F32": normStatF32, "NORM_CACHED": normCached, "NORM_THREADS": normThreads} {
		require.Equal(t, v, norm[name], name)
	}
}

// Select is a pure function of the node and the target: selecting every case again, in the
// reverse order, gives the same launches (a kernel that kept state between selections, such as
// a closure that rewrote its op code, would not).
func TestSelectIsPure(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	cases := allCases()
	first := make([][]launchRec, len(cases))
	for i, c := range cases {
		inst, err := reg.Select(&c.node, h200)
		require.NoError(t, err, c.name)
		first[i] = fakeRun(t, &c.node, inst)
	}
	for i := len(cases) - 1; i >= 0; i-- {
		c := cases[i]
		inst, err := reg.Select(&c.node, h200)
		require.NoError(t, err, c.name)
		require.Equal(t, first[i], fakeRun(t, &c.node, inst), c.name)
	}
}

// TestReduceAxesFromConst: a ReduceSum whose axes input is a device tensor and whose shapes do
// not say which dim it reduces ([4 4] -> [4]) is refused, unless the engine gives the axes' bytes
// (Value.Const, a weight or a host value); then it reduces the axis they name.
func TestReduceAxesFromConst(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	f32, i64 := graph.Float32, graph.Int64
	axes := v(i64, 1)
	n := nd("", "ReduceSum", kernels.Attrs("keepdims", 0), []kernels.Value{v(f32, 4, 4), axes}, v(f32, 4))
	_, err = reg.Select(&n, h200)
	require.ErrorContains(t, err, "do not say which")
	for _, ax := range []int64{0, 1, -1} {
		axes.Const = kernels.BytesOf([]int64{ax})
		n := nd("", "ReduceSum", kernels.Attrs("keepdims", 0), []kernels.Value{v(f32, 4, 4), axes}, v(f32, 4))
		inst, err := reg.Select(&n, h200)
		require.NoError(t, err, "axis %d", ax)
		require.NotEmpty(t, fakeRun(t, &n, inst))
	}
}

// carve_gqa_dec's geometry: the rows it computes cover the grouped heads (2, 4 or 8 of them,
// csrc GQA_DEC_R), and a processor's lanes cover the head.
func TestDecodeGeometry(t *testing.T) {
	for g, want := range map[int64]int64{1: 2, 2: 2, 3: 4, 4: 4, 5: 8, 6: 8, 7: 8, 8: 8} {
		require.Equal(t, want, decRows(g), "g %d", g)
	}
	for _, d := range []int64{1, 8, 12, 16, 32, 64, 80, 128, 200, 256} {
		dl := decDims(d)
		l := decLanes(d, dl)
		require.LessOrEqual(t, l, int64(32), "d %d", d)
		require.GreaterOrEqual(t, l*dl, d, "d %d", d)
		require.Zero(t, 32%l, "d %d: %d lanes a key", d, l)
	}
}

package cuda

import (
	"bufio"
	"fmt"
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
}

// fakeRun runs inst's program with a recording launcher over tensors at fake device addresses
// (inputs, outputs and workspace 1 MiB apart, 256-byte aligned) and returns the launches.
func fakeRun(t testing.TB, n *kernels.Node, inst kernels.Instance) []launchRec {
	t.Helper()
	next := alloc.Ptr(1 << 40)
	in, out := fakeTensors(t, n.Inputs, &next), fakeTensors(t, n.Outputs, &next)
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
		if c := ci.prog[i].call; c != nil {
			// a library call, not a kernel of ours; the launches it may make in its place count
			if lp, ok := c.(launchingCall); ok {
				for _, pr := range lp.programs() {
					require.NoError(t, pr.exec(1, in, out, ws, rec))
				}
			}
			continue
		}
		require.NoError(t, program{ci.prog[i]}.exec(1, in, out, ws, rec))
	}
	return recs
}

// launchingCall is a library call that launches kernels of ours beside or in place of the
// library (convCall: the own tactic when cuDNN cannot run, the bias after it).
type launchingCall interface {
	programs() []program
}

// fakeTensors binds vs to tensors at fake device addresses from *next on, advancing it: each
// 256-byte aligned and at least 1 MiB past the one before (absent values get none).
func fakeTensors(t testing.TB, vs []kernels.Value, next *alloc.Ptr) []kernels.Tensor {
	t.Helper()
	ts := make([]kernels.Tensor, len(vs))
	for i, v := range vs {
		if !v.Present() {
			continue
		}
		ts[i] = kernels.Tensor{DType: v.DType, Shape: v.Shape, Addr: *next}
		size, err := kernels.ByteSize(v.DType, v.Shape)
		require.NoError(t, err)
		*next += alloc.Ptr((size + (1 << 20)) &^ 255)
	}
	return ts
}

// soleLaunch selects n for an H200 and returns the one launch its program makes.
func soleLaunch(t *testing.T, reg *kernels.Registry, n *kernels.Node, name string) launchRec {
	t.Helper()
	return soleLaunchOn(t, reg, n, h200, name)
}

// soleLaunchOn selects n for target tg and returns the one kernel launch its program makes
// (library calls are not launches).
func soleLaunchOn(t *testing.T, reg *kernels.Registry, n *kernels.Node, tg kernels.Target, name string) launchRec {
	t.Helper()
	inst, err := reg.Select(n, tg)
	require.NoError(t, err, name)
	recs := fakeRun(t, n, inst)
	require.Len(t, recs, 1, name)
	return recs[0]
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

// TestCoverage: every op of the CPU backend has a CUDA kernel, but the collectives: tensor
// parallelism runs on simulated devices until NCCL's are built (the runner refuses --tp on cuda).
func TestCoverage(t *testing.T) {
	notYet := map[string]bool{"dev.carve.AllGather": true, "dev.carve.AllReduce": true}
	reg, err := Registry()
	require.NoError(t, err)
	have := map[string]bool{}
	for _, o := range reg.Ops(kernels.BackendCUDA) {
		have[o.Op.String()] = true
	}
	var missing []string
	for _, k := range cpu.Kernels() {
		if !have[k.Op().String()] && !notYet[k.Op().String()] {
			missing = append(missing, k.Op().String())
		}
	}
	slices.Sort(missing)
	require.Empty(t, missing, "ops of the CPU backend without a CUDA kernel")
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
	moe := read("moe.cu")
	for name, v := range map[string]int{"MOE_LEGACY": moeLegacyFlag, "MOE_ACT_SHIFT": moeActShift, "MOE_MAX_K": moeMaxK,
		"MOE_MAX_EXPERTS": moeMaxExperts, "MOE_SORT_THREADS": moeSortThreads, "MOE_RELU": int(kernels.MoERelu),
		"MOE_GELU": int(kernels.MoEGelu), "MOE_SILU": int(kernels.MoESilu), "MOE_IDENTITY": int(kernels.MoEIdentity),
		"MOE_SWIGLU": int(kernels.MoESwiGLU), "BN": moeTileCols, "NT": moeThreads} {
		require.Equal(t, v, moe[name], name)
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

// TestCumSumScanSelection: a CumSum whose axis is known at Select (Value.Const) and whose column
// is cumsumScanMin or longer runs as carve_cumsum_scan, one block a column; a short column, or an
// axis read on the device, runs as carve_cumsum, one thread a column.
func TestCumSumScanSelection(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	i64 := graph.Int64
	for _, c := range []struct {
		name  string
		shape []int64
		axis  kernels.Value
		want  string
		grid  uint32
	}{
		{"mask of 2048", []int64{1, 2048}, constAxis(i64, 1), "carve_cumsum_scan", 1},
		{"batch of 8 masks", []int64{8, 1024}, constAxis(i64, -1), "carve_cumsum_scan", 8},
		{"inner dims", []int64{2, 300, 3}, constAxis(graph.Int32, 1), "carve_cumsum_scan", 6},
		{"short column", []int64{4, cumsumScanMin - 1}, constAxis(i64, 1), "carve_cumsum", 0},
		{"along a short axis", []int64{300, 3}, constAxis(i64, 1), "carve_cumsum", 0},
		{"axis on the device", []int64{1, 2048}, v(i64), "carve_cumsum", 0},
		{"axis out of range", []int64{1, 2048}, constAxis(i64, 2), "carve_cumsum", 0},
	} {
		n := nd("", "CumSum", kernels.Attrs(), []kernels.Value{v(i64, c.shape...), c.axis}, v(i64, c.shape...))
		rec := soleLaunch(t, reg, &n, c.name)
		require.Equal(t, c.want, rec.kernel, c.name)
		if c.grid > 0 {
			require.Equal(t, c.grid, rec.grid.X, c.name)
			require.Equal(t, uint32(cumsumScanThreads), rec.block.X, c.name)
		}
	}
}

// TestWhereRowsSelection: a Where whose innermost dim holds whole 16-byte vectors and along
// which every operand is contiguous or broadcast runs as carve_where_rows_<E>, falling back to
// carve_where_<E> when an address is not 16-byte aligned; others run as carve_where_<E>.
func TestWhereRowsSelection(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	bl, bf := graph.Bool, graph.BFloat16
	for _, c := range []struct {
		name string
		in   []kernels.Value
		out  kernels.Value
		want string
	}{
		{"attention's empty rows", []kernels.Value{v(bl, 1, 1, 1, 2048, 1), v(bf, 1, 2, 1, 1, 128), v(bf, 1, 2, 6, 2048, 128)}, v(bf, 1, 2, 6, 2048, 128), "carve_where_rows_2"},
		{"contiguous", []kernels.Value{v(bl, 4, 64), v(graph.Float32, 4, 64), v(graph.Float32, 4, 64)}, v(graph.Float32, 4, 64), "carve_where_rows_4"},
		{"inner dim not whole vectors", []kernels.Value{v(bl, 3, 12), v(bf, 3, 12), v(bf, 3, 12)}, v(bf, 3, 12), "carve_where_2"},
		{"broadcast along the inner dim", []kernels.Value{v(bl, 8, 1), v(bf, 8, 1), v(bf, 1, 16)}, v(bf, 8, 16), "carve_where_rows_2"},
	} {
		n := nd("", "Where", kernels.Attrs(), c.in, c.out)
		rec := soleLaunch(t, reg, &n, c.name)
		require.Equal(t, c.want, rec.kernel, c.name)
	}
}

// TestArgMaxRowsSelection: ArgMax and ArgMin over innermost contiguous rows of whole 16-byte
// vectors run as carve_argmax_rows_<T>, or carve_argmax_split_<T> for a few long rows (falling
// back to carve_reduce_<T> when x is not 16-byte aligned); rows of a length that is not, other
// axes and integers run as carve_reduce_<T>.
func TestArgMaxRowsSelection(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	bf, f32, i64 := graph.BFloat16, graph.Float32, graph.Int64
	for _, c := range []struct {
		name    string
		op      string
		attrs   graph.Attributes
		in      kernels.Value
		out     kernels.Value
		want    string
		threads uint32
	}{
		{"greedy over a vocabulary", "ArgMax", kernels.Attrs("axis", -1, "keepdims", 0), v(bf, 8, 1, 151936), v(i64, 8, 1), "carve_argmax_split_bf16", 608},
		{"greedy over a vocabulary, many rows", "ArgMax", kernels.Attrs("axis", -1, "keepdims", 0), v(bf, 32, 1, 151936), v(i64, 32, 1), "carve_argmax_rows_bf16", 1024},
		{"a row too short to split", "ArgMax", kernels.Attrs("axis", -1), v(f32, 1, 8192), v(i64, 1, 1), "carve_argmax_rows_f32", 512},
		{"a short row", "ArgMin", kernels.Attrs("axis", 1), v(f32, 3, 64), v(i64, 3, 1), "carve_argmax_rows_f32", 32},
		{"rows of a partial vector", "ArgMax", kernels.Attrs("axis", 1), v(bf, 3, 500), v(i64, 3, 1), "carve_reduce_bf16", 0},
		{"an outer axis", "ArgMax", kernels.Attrs("axis", 0), v(f32, 300, 8), v(i64, 1, 8), "carve_reduce_f32", 0},
		{"integers", "ArgMax", kernels.Attrs("axis", 1), v(i64, 3, 512), v(i64, 3, 1), "carve_reduce_i64", 0},
	} {
		n := nd("", c.op, c.attrs, []kernels.Value{c.in}, c.out)
		rec := soleLaunch(t, reg, &n, c.name)
		require.Equal(t, c.want, rec.kernel, c.name)
		if c.threads > 0 {
			require.Equal(t, c.threads, rec.block.X, c.name)
		}
	}
}

// ONNX Attention's tensor-core tactic runs the plain kernel, whose scores are scaled dots masked
// only by is_causal and the key count, unless a mask needs a masked one, or softcap or a scale
// that is not positive the general one.
func TestONNXAttentionMMAKernel(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	bf := graph.BFloat16
	for _, tc := range []struct {
		name   string
		attrs  graph.Attributes
		mask   graph.DType
		kernel string
	}{
		{"causal", kernels.Attrs("is_causal", 1), 0, "carve_a23_mma_bf16_128"},
		{"scale", kernels.Attrs("scale", float32(0.5)), 0, "carve_a23_mma_bf16_128"},
		{"float-mask", kernels.Attrs("is_causal", 1), bf, "carve_a23_mmafmask_bf16_128"},
		{"bool-mask-negative-scale", kernels.Attrs("scale", float32(-0.5)), graph.Bool, "carve_a23_mmabmask_bf16_128"},
		{"softcap", kernels.Attrs("softcap", float32(30)), 0, "carve_a23_mmagen_bf16_128"},
		{"float-mask-softcap", kernels.Attrs("softcap", float32(30)), bf, "carve_a23_mmagen_bf16_128"},
		{"negative-scale", kernels.Attrs("scale", float32(-0.5)), 0, "carve_a23_mmagen_bf16_128"},
		{"zero-scale", kernels.Attrs("scale", float32(0)), 0, "carve_a23_mmagen_bf16_128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []kernels.Value{v(bf, 1, 4, 100, 128), v(bf, 1, 2, 100, 128), v(bf, 1, 2, 100, 128)}
			if tc.mask != 0 {
				in = append(in, v(tc.mask, 1, 1, 1, 100))
			}
			n := nd("", "Attention", tc.attrs, in, v(bf, 1, 4, 100, 128))
			inst, err := reg.Select(&n, h200)
			require.NoError(t, err)
			require.Equal(t, "flash-mma", inst.Tactic())
			var got []string
			for _, l := range fakeRun(t, &n, inst) {
				got = append(got, l.kernel)
			}
			require.Equal(t, []string{tc.kernel}, got)
		})
	}
}

// ONNX Attention through carve's layouts (graph.AttrQLayout): nn.MultiheadAttention's packed
// projection [S, B, 3, H, D] is read in place, Q, K and V at the offsets of their sections and
// with its strides, and Y written [S, B, H, D]; the tiles' kernel takes them as it takes
// ONNX's layout.
func TestONNXAttentionLayoutParams(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	f := graph.Float32
	const s, b, h, d = 17, 3, 4, 32
	p := v(f, s, b, 3, h, d)
	attrs := kernels.Attrs(graph.AttrQLayout, "sb0hd", graph.AttrKLayout, "sb1hd", graph.AttrVLayout, "sb2hd", graph.AttrYLayout, "sbhd")
	n := nd("", "Attention", attrs, []kernels.Value{p, p, p}, v(f, s, b, h, d))
	inst, err := reg.Select(&n, h200)
	require.NoError(t, err)
	require.Equal(t, "flash-tile", inst.Tactic())
	recs := fakeRun(t, &n, inst)
	require.Len(t, recs, 1)
	require.Equal(t, "carve_a23_tile_f32_32", recs[0].kernel)
	next := alloc.Ptr(1 << 40)
	in, out := fakeTensors(t, n.Inputs, &next), fakeTensors(t, n.Outputs, &next) // as fakeRun placed them
	e := uint64(h * d * 4)                                                       // a section's bytes
	args := recs[0].args
	require.Equal(t, []uint64{uint64(in[0].Addr), uint64(in[1].Addr) + e, uint64(in[2].Addr) + 2*e, uint64(out[0].Addr)},
		[]uint64{args[0].bits, args[1].bits, args[2].bits, args[3].bits}, "Q, K and V at their sections' offsets")
	pk := func(lo, hi int64) uint64 { return uint64(uint32(lo)) | uint64(uint32(hi))<<32 }
	row := int64(b * 3 * h * d) // one position's elements, every batch's three sections
	var strides []uint64
	for i := 5; i < 13; i++ {
		strides = append(strides, args[i].bits)
	}
	require.Equal(t, []uint64{3 * h * d, pk(d, row), 3 * h * d, pk(d, row), 3 * h * d, pk(d, row), h * d, pk(d, b*h*d)}, strides,
		"batch, then head and row strides of Q, K, V and Y")
	require.Equal(t, Dim3{X: 1, Y: b * h, Z: 1}, recs[0].grid)
}

// carve_gqa_dec's geometry: the rows it computes cover the grouped heads (2, 4, 6 or 8 of them,
// csrc GQA_DEC_R), and a processor's lanes cover the head.
func TestDecodeGeometry(t *testing.T) {
	for g, want := range map[int64]int64{1: 2, 2: 2, 3: 4, 4: 4, 5: 6, 6: 6, 7: 8, 8: 8} {
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

// Only kernels that keep csrc/common.cuh's rules for a dependent launch (pdlKernels) are
// launched dependent, in every test case and at the decode step's products.
func TestDependentSteps(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	nodes := []*kernels.Node{
		matmulNode(graph.BFloat16, []int64{1, 8960}, []int64{8960, 1536}, []int64{1, 1536}),
		matmulNode(graph.Float16, []int64{1, 2000}, []int64{2000, 1001}, []int64{1, 1001}),
		gatedNode(graph.BFloat16, []int64{1, 1, 1536}, 1536, 8960, true),
	}
	for _, c := range allCases() {
		nodes = append(nodes, &c.node)
	}
	seen := 0
	for _, n := range nodes {
		inst, err := reg.Select(n, h200)
		require.NoError(t, err, n.Name)
		var prog program
		switch x := inst.(type) {
		case *instance:
			prog = x.prog
		case *gemmInstance:
			prog = x.gemv
		}
		for i := range prog {
			for st := &prog[i]; st != nil; st = st.fallback {
				if !st.dependent {
					continue
				}
				seen++
				require.True(t, slices.ContainsFunc(pdlKernels, func(p string) bool { return strings.HasPrefix(st.kernel, p) }),
					"%s: %s is launched dependent but is not in pdlKernels", n.Name, st.kernel)
			}
		}
	}
	require.NotZero(t, seen, "no case launches a kernel dependent")
}

// Every instance whose workspace holds a library's cap can be measured (the tight plan lowers
// that part, engine.TightenEnvelope): MatMul at cuBLASLt, the kernels whose programs hold
// cuBLASLt products of their own (GatedMatMul, MatMulNBits, the contrib Attention), and Conv
// and ConvTranspose at cuDNN. The measured part is the "cublas" or the "cudnn" part; no other
// instance claims one.
func TestMeasuredParts(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	cases := allCases()
	for _, n := range []*kernels.Node{matmulNode(graph.BFloat16, []int64{64, 256}, []int64{256, 128}, []int64{64, 128}),
		matmulNode(graph.BFloat16, []int64{1, 256}, []int64{256, 128}, []int64{1, 128}), // gemv
		gatedNode(graph.BFloat16, []int64{64, 256}, 256, 128, true), gatedNode(graph.BFloat16, []int64{1, 256}, 256, 128, true)} {
		cases = append(cases, kcase{name: n.Op + fmt.Sprint(n.Inputs[0].Shape), node: *n})
	}
	measured := map[string]bool{}
	for _, c := range cases {
		inst, err := reg.Select(&c.node, h200)
		require.NoError(t, err, c.name)
		parts := inst.Recipe().Parts
		capPart := slices.IndexFunc(parts, func(p alloc.Part) bool { return p.Name == gemmPart || p.Name == convPart })
		wm, ok := inst.(WorkspaceMeasurer)
		if !ok {
			require.Equal(t, -1, capPart, "%s: a library's part that nothing measures", c.name)
			continue
		}
		p := wm.MeasuredPart()
		if capPart < 0 {
			require.Equal(t, -1, p, c.name)
			continue
		}
		require.Equal(t, capPart, p, "%s: the library's part is the measured one", c.name)
		measured[c.node.Op] = true
	}
	for _, op := range []string{"MatMul", "GatedMatMul", "MatMulNBits", "Attention", "Conv", "ConvTranspose"} {
		require.True(t, measured[op], "no case measures %s (measured: %v)", op, measured)
	}
}

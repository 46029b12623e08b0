package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// csrcEnums reads the NAME = value enumerators of csrc/file.
func csrcEnums(t *testing.T, file string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("csrc", file))
	require.NoError(t, err)
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`\b([A-Z][A-Z0-9_]+)\s*=\s*(\d+)\b`).FindAllStringSubmatch(string(b), -1) {
		v, _ := strconv.Atoi(m[2])
		out[m[1]] = v
	}
	return out
}

// The flags and mode codes of pool.go, channelnorm.go, pad.go and resize.go are those of their
// kernel sources.
func TestVisionCodesMatchSources(t *testing.T) {
	for file, want := range map[string]map[string]int{
		"pool.cu":        {"POOL_MAX": poolMax, "POOL_INCLUDE_PAD": poolIncludePad},
		"channelnorm.cu": {"CN_PER_GROUP": cnPerGroup, "CN_CACHED": cnCached},
		"pad.cu": {"PAD_DEVICE": padDevice, "PAD_AXES64": padAxes64, "PAD_MODE": 3, "PAD_CONSTANT": padModes["constant"],
			"PAD_REFLECT": padModes["reflect"], "PAD_EDGE": padModes["edge"], "PAD_WRAP": padModes["wrap"]},
		"resize.cu": {"RS_LINEAR": resizeModes["linear"], "CT_HALF_PIXEL": resizeCoords["half_pixel"],
			"CT_HALF_PIXEL_SYMMETRIC": resizeCoords["half_pixel_symmetric"], "CT_PYTORCH_HALF_PIXEL": resizeCoords["pytorch_half_pixel"],
			"CT_ALIGN_CORNERS": resizeCoords["align_corners"], "CT_ASYMMETRIC": resizeCoords["asymmetric"],
			"NM_ROUND_PREFER_FLOOR": resizeRounds["round_prefer_floor"], "NM_ROUND_PREFER_CEIL": resizeRounds["round_prefer_ceil"],
			"NM_FLOOR": resizeRounds["floor"], "NM_CEIL": resizeRounds["ceil"]},
	} {
		got := csrcEnums(t, file)
		for name, v := range want {
			require.Contains(t, got, name, file)
			require.Equal(t, v, got[name], "%s %s", file, name)
		}
	}
	require.Len(t, padModes, 4)
	require.Len(t, resizeCoords, 5)
	require.Len(t, resizeRounds, 4)
}

func groupNormNode(dt graph.DType, shape []int64, groups int64) *kernels.Node {
	n := nd("", "GroupNormalization", kernels.Attrs("num_groups", groups), []kernels.Value{v(dt, shape...), v(dt, shape[1]), v(dt, shape[1])}, v(dt, shape...))
	n.Opset = 21
	return &n
}

func instanceNormNode(dt graph.DType, shape []int64) *kernels.Node {
	n := nd("", "InstanceNormalization", kernels.Attrs(), []kernels.Value{v(dt, shape...), v(dt, shape[1]), v(dt, shape[1])}, v(dt, shape...))
	return &n
}

// InstanceNormalization and GroupNormalization take the split tactic for fewer items than
// multiprocessors that span more than one chunk, with partials of exactly two floats a chunk and
// a grid of (chunks, items); others take one block an item, with no workspace.
func TestChannelNormTactics(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	bf := graph.BFloat16
	for _, c := range []struct {
		name   string
		n      *kernels.Node
		tactic string
		chunks int64
	}{
		{"stable diffusion's VAE: 32 groups of 4 x 256 x 256", groupNormNode(bf, []int64{1, 128, 256, 256}, 32), "split", 9},
		{"32 groups of 10 x 64 x 64", groupNormNode(bf, []int64{2, 320, 64, 64}, 32), "split", 5},
		{"items of one chunk", groupNormNode(bf, []int64{1, 64, 32, 32}, 8), "direct", 0},
		{"enough items", groupNormNode(bf, []int64{8, 512, 32, 32}, 32), "direct", 0},
		{"instance norm over 100 x 100", instanceNormNode(graph.Float32, []int64{1, 3, 100, 100}), "split", 2},
		{"instance norm of many channels", instanceNormNode(graph.Float32, []int64{1, 256, 64, 64}), "direct", 0},
	} {
		inst, err := reg.Select(c.n, h200)
		require.NoError(t, err, c.name)
		require.Equal(t, c.tactic, inst.Tactic(), c.name)
		items, _, cpg, spatial := groupNormItems(c.n.Op, c.n.Attrs, c.n.Inputs[0].Shape)
		recs := fakeRun(t, c.n, inst)
		parts := inst.Recipe().Parts
		if c.tactic == "direct" {
			require.Empty(t, parts, c.name)
			require.Len(t, recs, 1, c.name)
			continue
		}
		require.Len(t, parts, 1, c.name)
		require.Equal(t, chnormPart, parts[0].Name, c.name)
		require.Equal(t, items*c.chunks*2*4, parts[0].Size, c.name)
		require.Len(t, recs, 2, c.name)
		for _, l := range recs {
			require.Equal(t, Dim3{X: uint32(c.chunks), Y: uint32(items), Z: 1}, l.grid, "%s: %s", c.name, l.kernel)
		}
		chunk := int64(recs[0].args[4].bits)
		require.Zero(t, chunk%chnormChunkAlign, c.name)
		require.GreaterOrEqual(t, chunk*c.chunks, cpg*spatial, c.name)
		require.Less(t, chunk*(c.chunks-1), cpg*spatial, c.name)
		w, err := reg.Bound(kernels.RangeOf(c.n), h200)
		require.NoError(t, err)
		require.LessOrEqual(t, parts[0].Size, w.Bytes, c.name)
	}
}

// chnormSplit's chunks cover each item, none of them empty, in fewer than 3 * SMs partials.
func TestChannelNormSplitGeometry(t *testing.T) {
	for _, tg := range []kernels.Target{h200, {SMs: 16}, {SMs: 1}} {
		for _, items := range []int64{1, 2, 3, 7, 31, 32, 100, 131} {
			for _, length := range []int64{chnormChunkMin + 1, 9000, 65536, 100003, 1 << 20, 123456789} {
				chunk, chunks, ok := chnormSplit(items, length, tg)
				if items >= int64(tg.SMs) {
					require.False(t, ok)
					continue
				}
				require.True(t, ok, "%d items of %d", items, length)
				require.Zero(t, chunk%chnormChunkAlign)
				require.GreaterOrEqual(t, chunk*chunks, length)
				require.Less(t, chunk*(chunks-1), length, "an empty chunk")
				require.Less(t, items*chunks, 3*int64(tg.SMs))
				require.LessOrEqual(t, items*chunks*8, chnormPartsCap(tg))
			}
		}
	}
}

// R <= W for the channel normalizations over ranges of batch, channels and plane, on an H200 and
// on a small GPU (random points and the corners, as TestRecipeWithinBound).
func TestChannelNormWithinBound(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	dr := func(lo, hi int64) kernels.DimRange { return kernels.DimRange{Lo: lo, Hi: hi} }
	fams := []family{
		{name: "group-norm-32", dims: []kernels.DimRange{dr(1, 8), dr(1, 16), dr(1, 256)}, make: func(d []int64) kernels.Node {
			return *groupNormNode(graph.Float16, []int64{d[0], 32 * d[1], d[2], d[2]}, 32)
		}},
		{name: "instance-norm", dims: []kernels.DimRange{dr(1, 4), dr(1, 200), dr(1, 300)}, make: func(d []int64) kernels.Node {
			return *instanceNormNode(graph.Float32, []int64{d[0], d[1], d[2], d[2]})
		}},
	}
	r := rand.New(rand.NewPCG(3, 4))
	small := kernels.Target{Backend: kernels.BackendCUDA, Arch: "sm_80", SMs: 16, SharedMemPerBlock: 100 << 10}
	tactics := map[string]int{}
	for _, tg := range []kernels.Target{h200, small} {
		for _, f := range fams {
			t.Run(fmt.Sprintf("%s/%d-SMs", f.name, tg.SMs), func(t *testing.T) {
				nr := rangeFrom(f)
				w, err := reg.Bound(&nr, tg)
				require.NoError(t, err)
				for i := range 200 {
					d := make([]int64, len(f.dims))
					for j, x := range f.dims {
						d[j] = x.Lo + r.Int64N(x.Hi-x.Lo+1)
						if i < 1<<len(f.dims) {
							d[j] = pick(x, i&(1<<j) != 0)
						}
					}
					n := f.make(d)
					size, tactic := recipeSize(t, reg, &n, tg)
					tactics[tactic]++
					require.LessOrEqual(t, size, w.Bytes, "%s at %v", f.name, d)
				}
				t.Logf("W %d bytes (%s)", w.Bytes, w.Tactic)
			})
		}
	}
	require.Len(t, tactics, 2, "both tactics reached: %v", tactics)
}

// Pad's pads are launch parameters where Select knows them (null pads pointer, no PAD_DEVICE),
// else the kernel reads them (and the axes) on the device.
func TestPadPadsAtSelect(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	f, i64 := graph.Float32, graph.Int64
	pads := v(i64, 6)
	pads.Const = kernels.BytesOf([]int64{0, -1, 2, 0, 3, 1})
	n := nd("", "Pad", kernels.Attrs("mode", "edge"), []kernels.Value{v(f, 2, 3, 7), pads}, v(f, 2, 5, 10))
	l := soleLaunch(t, reg, &n, "known")
	require.Equal(t, "carve_pad_4", l.kernel)
	require.Zero(t, l.args[3].bits, "pads pointer")
	require.Equal(t, uint64(padModes["edge"]), l.args[8].bits, "flags")
	for i, want := range []int64{0, -1, 2, 0, 0, 0} {
		require.Equal(t, want, int64(l.args[16+i].bits), "begin pad %d", i)
	}

	axes := v(graph.Int32, 1)
	n = nd("", "Pad", kernels.Attrs("mode", "reflect"), []kernels.Value{v(f, 2, 3, 7), v(i64, 2), none, axes}, v(f, 2, 3, 10))
	l = soleLaunch(t, reg, &n, "device")
	require.NotZero(t, l.args[3].bits, "pads pointer")
	require.NotZero(t, l.args[4].bits, "axes pointer")
	require.Equal(t, uint64(padModes["reflect"]|padDevice), l.args[8].bits, "flags")
	require.Equal(t, uint64(1), l.args[7].bits, "k")

	// opset 2: the attribute's pads and value
	n = nd("", "Pad", kernels.Attrs("pads", []int64{1, 0, 2, 3}, "value", float32(-1.5)), []kernels.Value{v(graph.BFloat16, 3, 4)}, v(graph.BFloat16, 6, 7))
	n.Opset = 2
	l = soleLaunch(t, reg, &n, "opset 2")
	require.Equal(t, "carve_pad_2", l.kernel)
	require.Equal(t, uint64(0xbfc0), l.args[9].bits, "bfloat16 -1.5")
	require.Equal(t, []int64{1, 0}, []int64{int64(l.args[16].bits), int64(l.args[17].bits)})
}

// Resize's scales are double parameters where Select knows them (the scales' bytes, sizes,
// the attribute); a scales tensor on the device is read by the kernel through sidx.
func TestResizeScalesAtSelect(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	f := graph.Float32
	sc := v(f, 2)
	sc.Const = kernels.BytesOf([]float32{2, 1.5})
	n := nd("", "Resize", kernels.Attrs("axes", []int64{2, 3}), []kernels.Value{v(f, 1, 2, 2, 4), none, sc}, v(f, 1, 2, 4, 6))
	n.Opset = 18
	l := soleLaunch(t, reg, &n, "known")
	require.Zero(t, l.args[2].bits, "scales pointer")
	for i, want := range []float64{1, 1, 2, 1.5, 0, 0} {
		require.Equal(t, want, math.Float64frombits(l.args[13+i].bits), "scale %d", i)
	}

	n = nd("", "Resize", kernels.Attrs("mode", "linear", "axes", []int64{-1, -2}), []kernels.Value{v(f, 1, 2, 3, 4), none, v(f, 2)}, v(f, 1, 2, 6, 10))
	n.Opset = 18
	l = soleLaunch(t, reg, &n, "device")
	require.NotZero(t, l.args[2].bits, "scales pointer")
	require.Equal(t, uint64(2<<8|1<<12), l.args[12].bits, "sidx: dim 3 takes scales[0], dim 2 scales[1]")
	require.Equal(t, uint64(resizeModes["linear"]), l.args[5].bits&15)

	// sizes: out/in exactly
	n = nd("", "Resize", kernels.Attrs(), []kernels.Value{v(f, 1, 3, 5, 5), none, none, v(graph.Int64, 4)}, v(f, 1, 3, 8, 7))
	l = soleLaunch(t, reg, &n, "sizes")
	require.Equal(t, 8.0/5, math.Float64frombits(l.args[15].bits))
	require.Equal(t, 7.0/5, math.Float64frombits(l.args[16].bits))
}

// What the CUDA kernels of the vision op set refuse beyond the shared checks: MaxPool's Indices,
// more than three spatial dims, ranks above 6, float64.
func TestVisionRefusals(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	f := graph.Float32
	A := kernels.Attrs
	for _, c := range []struct {
		n    kernels.Node
		want string
	}{
		{nd("", "MaxPool", A("kernel_shape", []int64{2, 2}, "strides", []int64{2, 2}), []kernels.Value{v(f, 1, 2, 6, 6)}, v(f, 1, 2, 3, 3), v(graph.Int64, 1, 2, 3, 3)), "Indices output is not supported"},
		{nd("", "AveragePool", A("kernel_shape", []int64{1, 1, 1, 1}), []kernels.Value{v(f, 1, 1, 2, 2, 2, 2)}, v(f, 1, 1, 2, 2, 2, 2)), "4 spatial dims"},
		{nd("", "AveragePool", A("kernel_shape", []int64{2}), []kernels.Value{v(graph.Float64, 1, 1, 4)}, v(graph.Float64, 1, 1, 3)), "the CUDA kernels take float32, float16 or bfloat16"},
		{nd("", "GlobalMaxPool", A(), []kernels.Value{v(graph.Float64, 1, 1, 4)}, v(graph.Float64, 1, 1, 1)), "the CUDA kernels take float32, float16 or bfloat16"},
		{nd("", "Pad", A(), []kernels.Value{v(f, 1, 1, 1, 1, 1, 1, 2), v(graph.Int64, 14)}, v(f, 1, 1, 1, 1, 1, 1, 2)), "rank 7"},
		{nd("", "Resize", A(), []kernels.Value{v(f, 1, 1, 1, 1, 1, 1, 2), none, v(f, 7)}, v(f, 1, 1, 1, 1, 1, 1, 4)), "rank 7"},
		{*groupNormNode(graph.Float64, []int64{1, 4, 8}, 2), "the CUDA kernels take float32, float16 or bfloat16"},
	} {
		_, err := reg.Select(&c.n, h200)
		require.ErrorContains(t, err, c.want, c.n.Op)
	}
}

package cuda

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// convSpec is a Conv, ConvTranspose or com.microsoft.FusedConv case: input x, weights w, output
// y, attributes, bias; for FusedConv, Z (input 3) and the activation ("Relu" or none).
type convSpec struct {
	name      string
	transpose bool
	x, w, y   []int64
	attrs     []any
	bias      bool
	fused     bool
	z         bool
	act       string
	tactic    string // the tactic Select must take on an H200
}

// epilogue reports whether the cudnn tactic runs carve_conv_epilogue_* after cuDNN.
func (c convSpec) epilogue() bool { return c.bias || c.z || c.act != "" }

// convSpecs are the convolution cases: 1-D and 2-D, groups and depthwise, strides, dilations,
// explicit, asymmetric and auto pads, bias or none, several tiles and inner slices of the
// implicit GEMM (odd K, more than one row tile), ConvTranspose with strides, output_padding and
// output_shape. Those cuDNN cannot describe (asymmetric pads it cannot fold) take the own tactic.
func convSpecs() []convSpec {
	cu, own := convTacticCudnn, convTacticOwn
	return []convSpec{
		{name: "2d-pad1-bias", x: []int64{2, 3, 9, 9}, w: []int64{4, 3, 3, 3}, y: []int64{2, 4, 9, 9}, attrs: []any{"pads", []int64{1, 1, 1, 1}}, bias: true, tactic: cu},
		{name: "2d-stride2", x: []int64{1, 8, 10, 12}, w: []int64{16, 8, 3, 3}, y: []int64{1, 16, 5, 6}, attrs: []any{"pads", []int64{1, 1, 1, 1}, "strides", []int64{2, 2}}, tactic: cu},
		{name: "2d-dilation2", x: []int64{1, 4, 11, 11}, w: []int64{6, 4, 3, 3}, y: []int64{1, 6, 11, 11}, attrs: []any{"pads", []int64{2, 2, 2, 2}, "dilations", []int64{2, 2}}, bias: true, tactic: cu},
		{name: "2d-group2", x: []int64{2, 8, 7, 7}, w: []int64{6, 4, 3, 3}, y: []int64{2, 6, 7, 7}, attrs: []any{"pads", []int64{1, 1, 1, 1}, "group", 2}, bias: true, tactic: cu},
		{name: "2d-group3", x: []int64{1, 6, 9, 9}, w: []int64{9, 2, 3, 3}, y: []int64{1, 9, 7, 7}, attrs: []any{"group", 3}, tactic: cu},
		{name: "2d-depthwise", x: []int64{2, 8, 10, 10}, w: []int64{8, 1, 3, 3}, y: []int64{2, 8, 10, 10}, attrs: []any{"pads", []int64{1, 1, 1, 1}, "group", 8}, bias: true, tactic: cu},
		{name: "2d-depthwise-mult2-stride2", x: []int64{1, 4, 9, 9}, w: []int64{8, 1, 3, 3}, y: []int64{1, 8, 4, 4}, attrs: []any{"strides", []int64{2, 2}, "group", 4}, tactic: cu},
		{name: "2d-depthwise-asym", x: []int64{1, 4, 8, 8}, w: []int64{4, 1, 3, 3}, y: []int64{1, 4, 8, 8}, attrs: []any{"pads", []int64{0, 1, 2, 1}, "group", 4}, bias: true, tactic: own},
		{name: "2d-pads-asym", x: []int64{1, 3, 8, 8}, w: []int64{5, 3, 3, 3}, y: []int64{1, 5, 8, 8}, attrs: []any{"pads", []int64{0, 1, 2, 1}}, bias: true, tactic: own},
		{name: "2d-same-upper-odd", x: []int64{1, 3, 9, 9}, w: []int64{4, 3, 3, 3}, y: []int64{1, 4, 5, 5}, attrs: []any{"auto_pad", "SAME_UPPER", "strides", []int64{2, 2}}, tactic: cu},
		{name: "2d-same-upper-even", x: []int64{1, 3, 8, 8}, w: []int64{4, 3, 3, 3}, y: []int64{1, 4, 4, 4}, attrs: []any{"auto_pad", "SAME_UPPER", "strides", []int64{2, 2}}, bias: true, tactic: own},
		{name: "2d-same-lower-even", x: []int64{1, 3, 8, 8}, w: []int64{4, 3, 3, 3}, y: []int64{1, 4, 4, 4}, attrs: []any{"auto_pad", "SAME_LOWER", "strides", []int64{2, 2}}, tactic: cu},
		{name: "2d-valid-5x3-stride1x2", x: []int64{2, 2, 12, 11}, w: []int64{3, 2, 5, 3}, y: []int64{2, 3, 8, 5}, attrs: []any{"auto_pad", "VALID", "strides", []int64{1, 2}}, bias: true, tactic: cu},
		{name: "2d-1x1", x: []int64{2, 16, 7, 7}, w: []int64{32, 16, 1, 1}, y: []int64{2, 32, 7, 7}, bias: true, tactic: cu},
		{name: "2d-tiles", x: []int64{2, 30, 17, 17}, w: []int64{70, 30, 3, 3}, y: []int64{2, 70, 17, 17}, attrs: []any{"pads", []int64{1, 1, 1, 1}}, bias: true, tactic: cu},
		{name: "1d-pad2-bias", x: []int64{2, 4, 20}, w: []int64{6, 4, 5}, y: []int64{2, 6, 20}, attrs: []any{"pads", []int64{2, 2}}, bias: true, tactic: cu},
		{name: "1d-stride2-dilation3", x: []int64{1, 3, 31}, w: []int64{4, 3, 3}, y: []int64{1, 4, 13}, attrs: []any{"strides", []int64{2}, "dilations", []int64{3}}, tactic: cu},
		{name: "1d-depthwise", x: []int64{2, 6, 16}, w: []int64{6, 1, 3}, y: []int64{2, 6, 16}, attrs: []any{"pads", []int64{1, 1}, "group", 6}, bias: true, tactic: cu},
		{name: "t2d-pad1", transpose: true, x: []int64{1, 4, 5, 5}, w: []int64{4, 3, 3, 3}, y: []int64{1, 3, 5, 5}, attrs: []any{"pads", []int64{1, 1, 1, 1}}, bias: true, tactic: cu},
		{name: "t2d-stride2-outpad1", transpose: true, x: []int64{2, 6, 4, 4}, w: []int64{6, 5, 3, 3}, y: []int64{2, 5, 8, 8}, attrs: []any{"pads", []int64{1, 1, 1, 1}, "strides", []int64{2, 2}, "output_padding", []int64{1, 1}}, bias: true, tactic: cu},
		{name: "t2d-stride2-k4", transpose: true, x: []int64{1, 8, 6, 6}, w: []int64{8, 4, 4, 4}, y: []int64{1, 4, 12, 12}, attrs: []any{"pads", []int64{1, 1, 1, 1}, "strides", []int64{2, 2}}, bias: true, tactic: cu},
		{name: "t2d-group2-stride2", transpose: true, x: []int64{1, 4, 5, 5}, w: []int64{4, 3, 3, 3}, y: []int64{1, 6, 11, 11}, attrs: []any{"strides", []int64{2, 2}, "group", 2}, tactic: cu},
		{name: "t2d-output-shape", transpose: true, x: []int64{1, 2, 5, 5}, w: []int64{2, 3, 3, 3}, y: []int64{1, 3, 10, 10}, attrs: []any{"strides", []int64{2, 2}, "output_shape", []int64{10, 10}}, bias: true, tactic: own},
		{name: "t2d-dilation2", transpose: true, x: []int64{1, 3, 6, 6}, w: []int64{3, 2, 3, 3}, y: []int64{1, 2, 8, 8}, attrs: []any{"pads", []int64{1, 1, 1, 1}, "dilations", []int64{2, 2}}, tactic: cu},
		{name: "t2d-depthwise-stride2", transpose: true, x: []int64{1, 4, 5, 5}, w: []int64{4, 1, 3, 3}, y: []int64{1, 4, 11, 11}, attrs: []any{"strides", []int64{2, 2}, "group", 4}, bias: true, tactic: cu},
		{name: "t2d-tiles", transpose: true, x: []int64{2, 24, 9, 9}, w: []int64{24, 70, 3, 3}, y: []int64{2, 70, 17, 17}, attrs: []any{"pads", []int64{1, 1, 1, 1}, "strides", []int64{2, 2}}, tactic: cu},
		{name: "t1d-stride3-outpad2", transpose: true, x: []int64{2, 4, 10}, w: []int64{4, 3, 5}, y: []int64{2, 3, 32}, attrs: []any{"strides", []int64{3}, "pads", []int64{1, 1}, "output_padding", []int64{2}}, bias: true, tactic: cu},
		// com.microsoft.FusedConv: bias or none, Z or none, Relu or no activation
		{name: "f2d-depthwise-z-relu", fused: true, x: []int64{2, 8, 10, 10}, w: []int64{8, 1, 3, 3}, y: []int64{2, 8, 10, 10}, attrs: []any{"pads", []int64{1, 1, 1, 1}, "group", 8}, bias: true, z: true, act: "Relu", tactic: cu},
		{name: "f2d-1x1-relu", fused: true, x: []int64{2, 16, 7, 7}, w: []int64{32, 16, 1, 1}, y: []int64{2, 32, 7, 7}, bias: true, act: "Relu", tactic: cu},
		{name: "f2d-stride2-z-nobias", fused: true, x: []int64{1, 8, 10, 12}, w: []int64{16, 8, 3, 3}, y: []int64{1, 16, 5, 6}, attrs: []any{"pads", []int64{1, 1, 1, 1}, "strides", []int64{2, 2}}, z: true, tactic: cu},
		{name: "f2d-tiles-stride2-relu-nobias", fused: true, x: []int64{2, 30, 17, 17}, w: []int64{70, 30, 3, 3}, y: []int64{2, 70, 9, 9}, attrs: []any{"pads", []int64{1, 1, 1, 1}, "strides", []int64{2, 2}}, act: "Relu", tactic: cu},
		{name: "f2d-pads-asym-z-relu", fused: true, x: []int64{1, 3, 8, 8}, w: []int64{5, 3, 3, 3}, y: []int64{1, 5, 8, 8}, attrs: []any{"pads", []int64{0, 1, 2, 1}}, bias: true, z: true, act: "Relu", tactic: own},
	}
}

// conv16 are the specs the 16-bit types also run (each tactic, both ops, the tensor-core tiles).
var conv16 = map[string]bool{"2d-pad1-bias": true, "2d-group2": true, "2d-depthwise": true, "2d-pads-asym": true, "2d-tiles": true,
	"1d-pad2-bias": true, "t2d-stride2-outpad1": true, "t2d-output-shape": true, "t2d-tiles": true, "t1d-stride3-outpad2": true,
	"f2d-depthwise-z-relu": true, "f2d-1x1-relu": true, "f2d-stride2-z-nobias": true, "f2d-tiles-stride2-relu-nobias": true, "f2d-pads-asym-z-relu": true}

func (c convSpec) node(dt graph.DType) kernels.Node {
	domain, op, attrs := "", "Conv", c.attrs
	switch {
	case c.transpose:
		op = "ConvTranspose"
	case c.fused:
		domain, op = kernels.DomainMicrosoft, "FusedConv"
		if c.act != "" {
			attrs = append(slices.Clone(attrs), "activation", c.act)
		}
	}
	in := []kernels.Value{v(dt, c.x...), v(dt, c.w...)}
	switch {
	case c.bias:
		in = append(in, v(dt, c.y[1]))
	case c.z:
		in = append(in, none)
	}
	if c.z {
		in = append(in, v(dt, c.y...))
	}
	return nd(domain, op, kernels.Attrs(attrs...), in, v(dt, c.y...))
}

// convCases are convSpecs as kcases: float32 all, float16 and bfloat16 the conv16 ones (the CPU
// reference runs them on float32 copies).
func convCases() []kcase {
	var cs []kcase
	for _, dt := range floatTypes {
		for _, c := range convSpecs() {
			if dt != graph.Float32 && !conv16[c.name] {
				continue
			}
			op := "Conv-"
			switch {
			case c.transpose:
				op = "ConvT-"
			case c.fused:
				op = "FusedConv-"
			}
			cs = append(cs, kcase{name: op + c.name + "/" + dtTag(dt), node: c.node(dt), kind: "conv", cpuF32: dt != graph.Float32})
		}
	}
	return cs
}

// Every spec takes its tactic on an H200, with its workspace: the cudnn tactic's one part of
// the policy bound (the im2col or col2im matrix in the node's type), own's none.
func TestConvTactics(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	for _, c := range convSpecs() {
		for _, dt := range floatTypes {
			n := c.node(dt)
			inst, err := reg.Select(&n, h200)
			require.NoError(t, err, c.name)
			require.Equal(t, c.tactic, inst.Tactic(), "%s %v", c.name, dt)
			r := inst.Recipe()
			if c.tactic == convTacticOwn {
				require.Empty(t, r.Parts, c.name)
				require.Equal(t, -1, inst.(WorkspaceMeasurer).MeasuredPart(), c.name)
				continue
			}
			kvol := numel(c.w[2:])
			want := c.x[0] * c.x[1] * kvol * numel(c.y[2:]) * dt.Size()
			if c.transpose {
				want = c.x[0] * c.y[1] * kvol * numel(c.x[2:]) * dt.Size()
			}
			require.Equal(t, []alloc.Part{{Name: convPart, Size: want}}, r.Parts, c.name)
			require.Equal(t, 0, inst.(WorkspaceMeasurer).MeasuredPart(), c.name)
		}
	}
}

// The declared workspace follows the Target's cap: 0 declares none (the cudnn tactic stays, for
// cuDNN's algorithms that need none), 8 MiB at most 8 MiB; and over a range of shapes W covers
// R at every point, capped alike.
func TestConvWorkspaceCap(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	A := kernels.Attrs
	f16 := graph.Float16
	// a ResNet stem at batch b: im2col is b * 3*7*7 * 112*112 halves, 3.5 MiB an image
	stem := func(d []int64) kernels.Node {
		b, hw := d[0], d[1]
		o := (hw+2*3-7)/2 + 1
		return nd("", "Conv", A("pads", []int64{3, 3, 3, 3}, "strides", []int64{2, 2}),
			[]kernels.Value{v(f16, b, 3, hw, hw), v(f16, 64, 3, 7, 7), v(f16, 64)}, v(f16, b, 64, o, o))
	}
	up := func(d []int64) kernels.Node {
		b, hw := d[0], d[1]
		return nd("", "ConvTranspose", A("pads", []int64{1, 1, 1, 1}, "strides", []int64{2, 2}),
			[]kernels.Value{v(f16, b, 64, hw, hw), v(f16, 64, 32, 4, 4)}, v(f16, b, 32, 2*hw, 2*hw))
	}
	none, eight := h200.WithWorkspaceCap(0), h200.WithWorkspaceCap(8<<20)
	for _, f := range []family{
		{name: "stem", dims: []kernels.DimRange{{Lo: 1, Hi: 32}, {Lo: 64, Hi: 224}}, make: stem},
		{name: "upsample", dims: []kernels.DimRange{{Lo: 1, Hi: 16}, {Lo: 8, Hi: 64}}, make: up},
	} {
		big := f.make([]int64{32, f.dims[1].Hi})
		size, tactic := recipeSize(t, reg, &big, h200)
		require.Equal(t, convTacticCudnn, tactic)
		require.Greater(t, size, int64(8<<20), "%s: the policy bound at the largest shapes", f.name)

		size, tactic = recipeSize(t, reg, &big, none)
		require.Zero(t, size, "%s: cap 0", f.name)
		require.Equal(t, convTacticCudnn, tactic, "%s: cuDNN's algorithms without workspace remain", f.name)
		inst, err := reg.Select(&big, none)
		require.NoError(t, err)
		require.Equal(t, -1, inst.(WorkspaceMeasurer).MeasuredPart(), "no part to measure")

		size, _ = recipeSize(t, reg, &big, eight)
		require.Equal(t, int64(8<<20), size, "%s: cap 8 MiB", f.name)

		nr := rangeFrom(f)
		for _, tg := range []kernels.Target{h200, none, eight} {
			w, err := reg.Bound(&nr, tg)
			require.NoError(t, err)
			if tg.WorkspaceCap != nil {
				require.LessOrEqual(t, w.Bytes, *tg.WorkspaceCap, "%s: W under the cap", f.name)
			}
			for _, b := range []int64{f.dims[0].Lo, 3, f.dims[0].Hi} {
				for _, hw := range []int64{f.dims[1].Lo, (f.dims[1].Lo + f.dims[1].Hi) / 2, f.dims[1].Hi} {
					n := f.make([]int64{b, hw})
					size, _ := recipeSize(t, reg, &n, tg)
					require.LessOrEqual(t, size, w.Bytes, "%s at %d, %d: R %d > W %d", f.name, b, hw, size, w.Bytes)
				}
			}
			t.Logf("%s: W %d bytes (%s) with cap %v", f.name, w.Bytes, w.Tactic, capString(tg))
		}
	}
}

func capString(t kernels.Target) string {
	if t.WorkspaceCap == nil {
		return "none"
	}
	return fmt.Sprint(*t.WorkspaceCap)
}

// The own programs are the ones their kernels take: the depthwise kernel for group == C, the
// SIMT product for float32 and the tensor-core one for the 16-bit types, a block per 64 x 64 tile
// of each group, and the cudnn tactic's epilogue after cuDNN (bias, FusedConv's Z and Relu).
func TestConvOwnLaunches(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	cases := []struct {
		spec   string
		dt     graph.DType
		kernel string
		grid   Dim3
		block  uint32
	}{
		{spec: "2d-tiles", dt: graph.Float32, kernel: "carve_conv_simt_f32", grid: Dim3{X: (2*17*17 + 63) / 64, Y: 2, Z: 1}, block: 256},
		{spec: "2d-tiles", dt: graph.BFloat16, kernel: "carve_conv_wmma_bf16", grid: Dim3{X: (2*17*17 + 63) / 64, Y: 2, Z: 1}, block: 128},
		{spec: "2d-group3", dt: graph.Float16, kernel: "carve_conv_wmma_f16", grid: Dim3{X: 1, Y: 1, Z: 3}, block: 128},
		{spec: "2d-depthwise", dt: graph.Float32, kernel: "carve_conv_dw_f32", block: 256},
		{spec: "t2d-group2-stride2", dt: graph.Float32, kernel: "carve_convt_simt_f32", grid: Dim3{X: 2, Y: 1, Z: 2}, block: 256},
		{spec: "t2d-depthwise-stride2", dt: graph.Float16, kernel: "carve_convt_wmma_f16", grid: Dim3{X: 2, Y: 1, Z: 4}, block: 128},
		{spec: "f2d-depthwise-z-relu", dt: graph.Float16, kernel: "carve_conv_dw_f16", block: 256},
		{spec: "f2d-stride2-z-nobias", dt: graph.Float32, kernel: "carve_conv_simt_f32", grid: Dim3{X: 1, Y: 1, Z: 1}, block: 256},
		{spec: "f2d-tiles-stride2-relu-nobias", dt: graph.BFloat16, kernel: "carve_conv_wmma_bf16", grid: Dim3{X: (2*9*9 + 63) / 64, Y: 2, Z: 1}, block: 128},
	}
	specs := map[string]convSpec{}
	for _, c := range convSpecs() {
		specs[c.name] = c
	}
	for _, c := range cases {
		n := specs[c.spec].node(c.dt)
		inst, err := reg.Select(&n, h200)
		require.NoError(t, err)
		recs := fakeRun(t, &n, inst)
		require.Equal(t, c.kernel, recs[0].kernel, c.spec)
		require.Equal(t, c.block, recs[0].block.X, c.spec)
		if c.grid.X > 0 {
			require.Equal(t, c.grid, recs[0].grid, c.spec)
		}
		if sp := specs[c.spec]; sp.epilogue() {
			want := 2
			if sp.z && (sp.bias || sp.act != "") {
				want = 3 // and the epilogue without Z, for a Z in place of the output (convCall)
				require.Equal(t, "carve_conv_epilogue_"+dtName(c.dt), recs[2].kernel)
				require.Equal(t, PtrArg(0), recs[2].args[2], "%s: no Z in place", c.spec)
			}
			require.Len(t, recs, want, "%s: own, then the epilogue after cuDNN", c.spec)
			require.Equal(t, "carve_conv_epilogue_"+dtName(c.dt), recs[1].kernel)
		} else {
			require.Len(t, recs, 1, c.spec)
		}
	}
}

// Three-dimensional convolutions and the types the kernels do not take are refused at Select.
func TestConvRefused(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	f := graph.Float32
	n3 := nd("", "Conv", kernels.Attrs(), []kernels.Value{v(f, 1, 2, 4, 4, 4), v(f, 3, 2, 3, 3, 3)}, v(f, 1, 3, 2, 2, 2))
	_, err = reg.Select(&n3, h200)
	require.ErrorContains(t, err, "3-D")
	d := graph.Float64
	n64 := nd("", "Conv", kernels.Attrs(), []kernels.Value{v(d, 1, 2, 4, 4), v(d, 3, 2, 3, 3)}, v(d, 1, 3, 2, 2))
	_, err = reg.Select(&n64, h200)
	require.ErrorContains(t, err, "float32, float16 or bfloat16")
}

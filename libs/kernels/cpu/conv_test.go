package cpu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// convCase is one Conv: input and weight shapes, group, strides, dilations and pads (begins then
// ends; nil for none) or auto_pad.
type convCase struct {
	x, w         []int64
	group        int64
	strides, dil []int64
	pads         []int64
	autoPad      string
	bias         bool
}

func (c convCase) String() string {
	return fmt.Sprintf("x%v w%v g%d s%v d%v p%v %s b%v", c.x, c.w, c.group, c.strides, c.dil, c.pads, c.autoPad, c.bias)
}

func onesOf(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// geometry is the case's output dims and begin pads, computed from the ONNX formulas here.
func (c convCase) geometry() (out, begin []int64) {
	sp := len(c.x) - 2
	strides, dil := c.strides, c.dil
	if strides == nil {
		strides = onesOf(sp)
	}
	if dil == nil {
		dil = onesOf(sp)
	}
	out, begin = make([]int64, sp), make([]int64, sp)
	for i := range sp {
		in, k := c.x[2+i], (c.w[2+i]-1)*dil[i]+1
		switch c.autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			out[i] = (in + strides[i] - 1) / strides[i]
			total := max(0, (out[i]-1)*strides[i]+k-in)
			begin[i] = total / 2
			if c.autoPad == "SAME_LOWER" {
				begin[i] = total - total/2
			}
		case "VALID":
			out[i] = (in-k)/strides[i] + 1
		default:
			var pb, pe int64
			if c.pads != nil {
				pb, pe = c.pads[i], c.pads[sp+i]
			}
			out[i] = (in+pb+pe-k)/strides[i] + 1
			begin[i] = pb
		}
	}
	return out, begin
}

func (c convCase) node(withBias bool) (*kernels.Node, []int64) {
	sp := len(c.x) - 2
	var pairs []any
	if c.group != 0 {
		pairs = append(pairs, "group", c.group)
	}
	if c.strides != nil {
		pairs = append(pairs, "strides", c.strides)
	}
	if c.dil != nil {
		pairs = append(pairs, "dilations", c.dil)
	}
	if c.pads != nil {
		pairs = append(pairs, "pads", c.pads)
	}
	if c.autoPad != "" {
		pairs = append(pairs, "auto_pad", c.autoPad)
	}
	out, _ := c.geometry()
	yshape := append([]int64{c.x[0], c.w[0]}, out...)
	n := &kernels.Node{Name: "conv", Op: "Conv", Attrs: kernels.Attrs(pairs...),
		Inputs:  []kernels.Value{{DType: graph.Float32, Shape: c.x}, {DType: graph.Float32, Shape: c.w}},
		Outputs: []kernels.Value{{DType: graph.Float32, Shape: yshape}}}
	if withBias {
		n.Inputs = append(n.Inputs, kernels.Value{DType: graph.Float32, Shape: []int64{c.w[0]}})
	}
	_ = sp
	return n, yshape
}

// refConv is Conv by nested loops over every output element and kernel tap.
func refConv(c convCase, x, w, b []float32) []float32 {
	sp := len(c.x) - 2
	out, begin := c.geometry()
	strides, dil := c.strides, c.dil
	if strides == nil {
		strides = onesOf(sp)
	}
	if dil == nil {
		dil = onesOf(sp)
	}
	// pad everything to 3 spatial dims
	pad3 := func(v []int64, fill int64) [3]int64 {
		r := [3]int64{fill, fill, fill}
		copy(r[3-len(v):], v)
		return r
	}
	in3, k3, o3 := pad3(c.x[2:], 1), pad3(c.w[2:], 1), pad3(out, 1)
	s3, d3, p3 := pad3(strides, 1), pad3(dil, 1), pad3(begin, 0)
	group := max(c.group, 1)
	N, C, M := c.x[0], c.x[1], c.w[0]
	cg, mg := C/group, M/group
	y := make([]float32, N*M*o3[0]*o3[1]*o3[2])
	i := 0
	for n := range N {
		for m := range M {
			g := m / mg
			for od := range o3[0] {
				for oh := range o3[1] {
					for ow := range o3[2] {
						var s float64
						if b != nil {
							s = float64(b[m])
						}
						for ci := range cg {
							ch := g*cg + ci
							for kd := range k3[0] {
								for kh := range k3[1] {
									for kw := range k3[2] {
										id := od*s3[0] - p3[0] + kd*d3[0]
										ih := oh*s3[1] - p3[1] + kh*d3[1]
										iw := ow*s3[2] - p3[2] + kw*d3[2]
										if id < 0 || ih < 0 || iw < 0 || id >= in3[0] || ih >= in3[1] || iw >= in3[2] {
											continue
										}
										xv := x[(((n*C+ch)*in3[0]+id)*in3[1]+ih)*in3[2]+iw]
										wv := w[(((m*cg+ci)*k3[0]+kd)*k3[1]+kh)*k3[2]+kw]
										s += float64(xv) * float64(wv)
									}
								}
							}
						}
						y[i] = float32(s)
						i++
					}
				}
			}
		}
	}
	return y
}

var convCases = []convCase{
	{x: []int64{1, 3, 8, 8}, w: []int64{4, 3, 3, 3}},
	{x: []int64{2, 3, 9, 7}, w: []int64{5, 3, 3, 3}, pads: []int64{1, 1, 1, 1}, bias: true},
	{x: []int64{1, 3, 17, 13}, w: []int64{8, 3, 7, 7}, strides: []int64{2, 2}, pads: []int64{3, 3, 3, 3}, bias: true},
	{x: []int64{1, 4, 11, 10}, w: []int64{6, 2, 3, 3}, group: 2, dil: []int64{2, 1}, pads: []int64{0, 1, 2, 0}, bias: true},
	{x: []int64{2, 6, 9, 9}, w: []int64{6, 1, 3, 3}, group: 6, pads: []int64{1, 1, 1, 1}, bias: true},                 // depthwise
	{x: []int64{1, 4, 10, 7}, w: []int64{8, 1, 3, 3}, group: 4, strides: []int64{2, 2}, pads: []int64{1, 0, 0, 1}},    // depthwise, multiplier 2
	{x: []int64{1, 5, 9, 8}, w: []int64{5, 1, 5, 3}, group: 5, dil: []int64{1, 2}, autoPad: "SAME_UPPER", bias: true}, // depthwise, SAME
	{x: []int64{1, 3, 15, 16}, w: []int64{4, 3, 3, 3}, strides: []int64{2, 2}, autoPad: "SAME_UPPER", bias: true},
	{x: []int64{1, 3, 15, 16}, w: []int64{4, 3, 4, 2}, strides: []int64{2, 3}, autoPad: "SAME_LOWER"},
	{x: []int64{1, 3, 15, 16}, w: []int64{4, 3, 4, 2}, strides: []int64{2, 3}, autoPad: "VALID", bias: true},
	{x: []int64{2, 16, 7, 5}, w: []int64{24, 16, 1, 1}, bias: true}, // 1x1
	{x: []int64{1, 16, 7, 5}, w: []int64{24, 16, 1, 1}, strides: []int64{2, 2}},
	{x: []int64{1, 8, 6, 6}, w: []int64{12, 2, 1, 1}, group: 4, bias: true},       // grouped 1x1
	{x: []int64{3, 1, 50}, w: []int64{8, 1, 10}, strides: []int64{5}, bias: true}, // 1-D audio front end
	{x: []int64{2, 6, 33}, w: []int64{4, 6, 3}, pads: []int64{1, 1}, dil: []int64{2}},
	{x: []int64{1, 6, 20}, w: []int64{6, 3, 4}, group: 2, autoPad: "SAME_LOWER", strides: []int64{3}},
	{x: []int64{1, 2, 5, 6, 7}, w: []int64{3, 2, 3, 3, 3}, pads: []int64{1, 0, 1, 1, 0, 1}, bias: true}, // 3-D
	{x: []int64{1, 3, 4, 5, 6}, w: []int64{3, 1, 2, 3, 1}, group: 3, strides: []int64{1, 2, 1}},         // 3-D depthwise
	// many output positions at unit strides: taps (K = 300, P = 40*41)
	{x: []int64{2, 12, 40, 41}, w: []int64{7, 12, 5, 5}, pads: []int64{2, 2, 2, 2}, bias: true},
	{x: []int64{1, 64, 20, 20}, w: []int64{33, 64, 3, 3}, pads: []int64{1, 1, 1, 1}},
	// few output positions (a CNN's late layers): chunks unfolded by all the workers, then one
	// parallel product each
	{x: []int64{1, 256, 7, 7}, w: []int64{40, 256, 3, 3}, pads: []int64{1, 1, 1, 1}, bias: true},
	{x: []int64{1, 1024, 14, 13}, w: []int64{20, 1024, 1, 1}, strides: []int64{2, 2}, bias: true},
	// several col tiles (K = 300, P = 40*41): tiles side by side and a narrower last tile
	{x: []int64{2, 12, 80, 82}, w: []int64{7, 12, 5, 5}, strides: []int64{2, 2}, pads: []int64{2, 2, 2, 2}, bias: true},
	// taps: groups, dilations and uneven pads (P = 28*30); 1-D (P = 898)
	{x: []int64{1, 4, 30, 31}, w: []int64{6, 2, 3, 3}, group: 2, dil: []int64{2, 1}, pads: []int64{0, 1, 2, 0}, bias: true},
	{x: []int64{2, 6, 900}, w: []int64{4, 6, 3}, pads: []int64{1, 1}, dil: []int64{2}},
	// few output positions and at least convSwapMinM output channels a group: swapped products
	// (im2col, gemm-1x1, a grouped strided 1x1 whose group's channels end mid-panel)
	{x: []int64{1, 40, 7, 7}, w: []int64{72, 40, 3, 3}, pads: []int64{1, 1, 1, 1}, bias: true},
	{x: []int64{2, 48, 9, 11}, w: []int64{80, 48, 1, 1}, bias: true},
	{x: []int64{1, 16, 14, 13}, w: []int64{140, 8, 1, 1}, group: 2, strides: []int64{2, 2}},
}

func TestConv(t *testing.T) {
	r := rng(t, 7)
	for _, c := range convCases {
		t.Run(c.String(), func(t *testing.T) {
			n, yshape := c.node(c.bias)
			x, w := randF32(r, c.x...), randF32(r, c.w...)
			in := []kernels.Tensor{x, w}
			var b []float32
			if c.bias {
				bt := randF32(r, c.w[0])
				in, b = append(in, bt), bt.Float32s()
			}
			got, inst := run(t, n, in...)
			require.Equal(t, yshape, got[0].Shape)
			closeTo(t, refConv(c, x.Float32s(), w.Float32s(), b), got[0].Float32s(), 1e-4, inst.Tactic())
			for _, workers := range []int{1, 2} {
				inst1, err := registry.Select(n, kernels.Target{Backend: kernels.BackendCPU, Workers: workers})
				require.NoError(t, err)
				out := []kernels.Tensor{kernels.MustTensor(graph.Float32, yshape...)}
				size, _ := inst1.Recipe().Size()
				reg, keep := region(size)
				require.NoError(t, kernels.Execute(inst1, in, out, reg, 0))
				_ = keep[0]
				require.Equal(t, got[0].Float32s(), out[0].Float32s(), "workers %d (%s) differ", workers, inst1.Tactic())
			}
		})
	}
}

// TestFusedConv: com.microsoft.FusedConv is Conv, then Z added (when present), then Relu, on
// every case and tactic, and its results do not depend on the workers either.
func TestFusedConv(t *testing.T) {
	r := rng(t, 9)
	for _, c := range convCases {
		for _, withZ := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v/z=%v", c, withZ), func(t *testing.T) {
				n, yshape := c.node(c.bias)
				n.Domain, n.Op = kernels.DomainMicrosoft, "FusedConv"
				n.Attrs = withAttr(n.Attrs, graph.Attribute{Name: "activation", Kind: graph.AttrString, String: "Relu"})
				x, w := randF32(r, c.x...), randF32(r, c.w...)
				in := []kernels.Tensor{x, w, {}}
				n.Inputs = append(n.Inputs[:2], kernels.Value{})
				var b []float32
				if c.bias {
					bt := randF32(r, c.w[0])
					in[2], b = bt, bt.Float32s()
					n.Inputs[2] = value(bt)
				}
				want := refConv(c, x.Float32s(), w.Float32s(), b)
				if withZ {
					zt := randF32(r, yshape...)
					in = append(in, zt)
					n.Inputs = append(n.Inputs, value(zt))
					for i, v := range zt.Float32s() {
						want[i] += v
					}
				}
				for i, v := range want {
					want[i] = max(v, 0)
				}
				got, inst := run(t, n, in...)
				closeTo(t, want, got[0].Float32s(), 1e-4, inst.Tactic())
				for _, workers := range []int{1, 2} {
					inst1, err := registry.Select(n, kernels.Target{Backend: kernels.BackendCPU, Workers: workers})
					require.NoError(t, err)
					out := []kernels.Tensor{kernels.MustTensor(graph.Float32, yshape...)}
					size, _ := inst1.Recipe().Size()
					reg, keep := region(size)
					require.NoError(t, kernels.Execute(inst1, in, out, reg, 0))
					_ = keep[0]
					require.Equal(t, got[0].Float32s(), out[0].Float32s(), "workers %d (%s) differ", workers, inst1.Tactic())
				}
				if withZ && c.bias {
					requireNoAllocs(t, n, in...)
				}
			})
		}
	}
	// activations other than Relu are refused; so is a Z of another shape
	c := convCases[0]
	n, _ := c.node(false)
	n.Domain, n.Op = kernels.DomainMicrosoft, "FusedConv"
	n.Attrs = withAttr(n.Attrs, graph.Attribute{Name: "activation", Kind: graph.AttrString, String: "Tanh"})
	_, err := registry.Select(n, dev)
	require.ErrorContains(t, err, `activation "Tanh" is not supported`)
	n.Attrs = graph.Attributes{}
	n.Inputs = append(n.Inputs, kernels.Value{}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 4, 6, 5}})
	_, err = registry.Select(n, dev)
	require.ErrorContains(t, err, "Z is")
}

// withAttr is a with at added.
func withAttr(a graph.Attributes, at graph.Attribute) graph.Attributes {
	var list []graph.Attribute
	for _, name := range a.Names() {
		v, _ := a.Get(name)
		list = append(list, v)
	}
	return graph.NewAttributes(append(list, at)...)
}

func TestConvTactics(t *testing.T) {
	for want, c := range map[string]convCase{
		"depthwise": convCases[4],
		"gemm-1x1":  convCases[10],
		"im2col":    convCases[1],
		"taps":      convCases[23],
	} {
		n, _ := c.node(c.bias)
		inst, err := registry.Select(n, dev)
		require.NoError(t, err)
		require.Equal(t, want, inst.Tactic(), c.String())
		size, _ := inst.Recipe().Size()
		if want == "depthwise" {
			require.Zero(t, size)
		}
	}
}

func TestConvWorkspace(t *testing.T) {
	r := rng(t, 8)
	c := convCases[22]
	n, _ := c.node(true)
	in := []kernels.Tensor{randF32(r, c.x...), randF32(r, c.w...), randF32(r, c.w[0])}
	inst := requireRefusesSmallWorkspace(t, n, in...)
	require.Equal(t, "im2col", inst.Tactic())
	// each participant's col tile is bounded, whatever the output's size
	col := inst.Recipe().Parts[0]
	require.Equal(t, "col", col.Name)
	require.LessOrEqual(t, col.Size, int64(dev.Workers)*4*max(convTileFloats, 300*convMinCols))
	requireNoAllocs(t, n, in...)
	c = convCases[4]
	n, _ = c.node(true)
	requireNoAllocs(t, n, randF32(r, c.x...), randF32(r, c.w...), randF32(r, c.w[0]))
	// taps: the padded input, the reordered weights, Y' and gemm's
	c = convCases[18]
	n, _ = c.node(true)
	in = []kernels.Tensor{randF32(r, c.x...), randF32(r, c.w...), randF32(r, c.w[0])}
	inst = requireRefusesSmallWorkspace(t, n, in...)
	require.Equal(t, "taps", inst.Tactic())
	var names []string
	for _, p := range inst.Recipe().Parts {
		names = append(names, p.Name)
	}
	require.Equal(t, []string{"pad", "weights", "out", "gemm"}, names)
	requireNoAllocs(t, n, in...)
}

func TestConvRefusals(t *testing.T) {
	f := graph.Float32
	v := func(shape ...int64) kernels.Value { return kernels.Value{DType: f, Shape: shape} }
	for _, tc := range []struct {
		name  string
		in    []kernels.Value
		out   []int64
		attrs graph.Attributes
		want  string
	}{
		{"group does not divide", []kernels.Value{v(1, 6, 8, 8), v(4, 3, 3, 3)}, []int64{1, 4, 6, 6}, kernels.Attrs("group", 4), "group 4 does not divide the input channels 6"},
		{"weight channels", []kernels.Value{v(1, 6, 8, 8), v(4, 2, 3, 3)}, []int64{1, 4, 6, 6}, kernels.Attrs("group", 2), "weight [4 2 3 3] has 2 channels per group, want 3"},
		{"weight rank", []kernels.Value{v(1, 6, 8, 8), v(4, 6, 3)}, []int64{1, 4, 6, 6}, kernels.Attrs(), "want one rank"},
		{"kernel too big", []kernels.Value{v(1, 3, 2, 8), v(4, 3, 3, 3)}, []int64{1, 4, 1, 6}, kernels.Attrs(), "too small for kernel [3 3]"},
		{"bias shape", []kernels.Value{v(1, 3, 8, 8), v(4, 3, 3, 3), v(3)}, []int64{1, 4, 6, 6}, kernels.Attrs(), "bias is float32[3], want float32[4]"},
		{"output shape", []kernels.Value{v(1, 3, 8, 8), v(4, 3, 3, 3)}, []int64{1, 4, 8, 8}, kernels.Attrs(), "output 0 has shape [1 4 8 8], want [1 4 6 6]"},
		{"auto_pad", []kernels.Value{v(1, 3, 8, 8), v(4, 3, 3, 3)}, []int64{1, 4, 8, 8}, kernels.Attrs("auto_pad", "SAME"), `auto_pad "SAME" is not one of`},
		{"kernel_shape", []kernels.Value{v(1, 3, 8, 8), v(4, 3, 3, 3)}, []int64{1, 4, 7, 7}, kernels.Attrs("kernel_shape", []int64{2, 2}), "differs from the weight's spatial dims [3 3]"},
		{"int input", []kernels.Value{{DType: graph.Int32, Shape: []int64{1, 3, 8, 8}}, {DType: graph.Int32, Shape: []int64{4, 3, 3, 3}}}, []int64{1, 4, 6, 6}, kernels.Attrs(), "want a float type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &kernels.Node{Name: "conv", Op: "Conv", Attrs: tc.attrs, Inputs: tc.in, Outputs: []kernels.Value{{DType: tc.in[0].DType, Shape: tc.out}}}
			_, err := registry.Select(n, dev)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

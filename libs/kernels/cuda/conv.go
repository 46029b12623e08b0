package cuda

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Conv and ConvTranspose (convtranspose.go): ONNX's, 1-D and 2-D (a 1-D node runs as 2-D with
// height 1), with group (depthwise included), strides, dilations, explicit and auto pads,
// ConvTranspose's output_padding and output_shape, and an optional bias, on float32, float16 and
// bfloat16; and onnxruntime's com.microsoft.FusedConv, a Conv with an optional Z of the output's
// shape added and activation "Relu" or none (what graph/rewrite's conv-relu fusion makes), with
// Conv's tactics and workspace. The node checks and the output arithmetic are the CPU's
// (kernels.CheckConv, kernels.CheckConvTranspose, graph.Window). Two tactics:
//
//   - "cudnn": cuDNN 9, loaded at run time with dlopen (cudnn_cuda.go): cudnnConvolutionForward
//     for Conv, cudnnConvolutionBackwardData for ConvTranspose (a transposed convolution is the
//     adjoint of the forward convolution from its output to its input, with the same weights),
//     then the epilogue (bias, FusedConv's Z and Relu) by carve_conv_epilogue_*. Selected for every node cuDNN can describe (cudnnDesc):
//     pads equal at both ends of each dim, or whose extra end pad no window reaches; tensors
//     below 2^31 elements; bfloat16 on sm_80 and newer.
//   - "own": kernels of ours (csrc/conv.cu), which need no library and no workspace: an implicit
//     GEMM (float32 FMAs; tensor cores for float16 and bfloat16) or, for a depthwise Conv, a
//     direct loop, the epilogue (bias, Z, Relu) fused in the store. Selected for the nodes cuDNN cannot describe, and run by the
//     cudnn tactic whenever cuDNN does not load, fails to plan the node, or has no algorithm that
//     fits the workspace carved (Label says which ran).
//
// The workspace contract. Select and Bound are pure functions of the node and the Target, so a
// cudnn node cannot declare what the algorithm chosen on the device will need. It declares a
// cap instead, one part "cudnn" of R = min(policy bound, Target.WorkspaceCap) bytes, no part
// when that is 0. The policy bound is the workspace of the explicit lowering to one GEMM, in the
// node's type: the im2col matrix of the whole batch for Conv (N*C*KH*KW*OH*OW elements) and the
// col2im one for ConvTranspose (N*M*KH*KW*IH*IW). An algorithm that needs more holds more
// scratch than materializing the unfolded input would, which is the memory an implicit
// convolution exists to save; cuDNN's implicit-GEMM algorithms need little of it or none, its
// FFT and Winograd ones more. The bound grows with every dim, so W over a range is the bound at
// the range's largest dims, capped the same way.
//
// On the device (cudnn_cuda.go) the descriptors are made once per device and node shape and the
// algorithms are ranked among those whose workspace fits R: by measurement where the instance's
// MeasureWorkspace asks (cudnnFind*AlgorithmEx on scratch buffers of the node's shapes, the own
// tactic timed beside them), which is what the engine's tight plan does at load, and otherwise
// by cudnnGet*Algorithm_v7's heuristic ranking at the first Run. MeasureWorkspace reports the
// fastest choice's real workspace: the tight plan's C. Run takes the fastest choice that fits
// the part it is carved, at any size down to alloc.DefaultPartAlign, ending at the own kernels,
// which fit any: so the tight plan may carve the measured part at one size for every binding
// (engine.WorkspaceMeasurer) even though R here depends on the dims, and a binding between its
// candidates costs no memory, at worst a slower algorithm. Float32 convolutions use
// CUDNN_FMA_MATH (no TF32: carve's float32 GEMMs are exact float32 too), the 16-bit types
// tensor-op math, always with float32 accumulation.
//
// Load. The plan (cuDNN loaded, the device's one handle, the descriptors, the ranking) is made
// once per process, device and shape, and destroyed by Backend.Close: ahead by Prepare or
// MeasureWorkspace, which also run every choice, or else at the shape's first Run, as cuBLASLt's
// plans are. That first Run is then the one that allocates: host descriptors, and on the
// device's first convolution the cuDNN handle's own device memory, outside carve's arena. Later
// Runs only queue. A runtime calls Prepare at load to keep every Run so.
//
// Graph capture: cuDNN's handle cannot be created inside a stream capture, and an algorithm's
// first run may initialize what a capture cannot record. So a plan is made only outside one,
// and inside a capture a choice runs only once it has run outside one; otherwise the own
// kernels run, correct but slower, and stay in the captured graph. A runtime that captures
// graphs must call Prepare at load.

const (
	convTacticCudnn = "cudnn"
	convTacticOwn   = "own"
	// convPart is the workspace part a cuDNN convolution gets whole.
	convPart = "cudnn"
)

// Test hooks (read by the cudnn tactic's Run): convForceOwn runs the own kernels in its place,
// convForceChoice >= 0 takes that choice of the plan's ranking (TestConvCudnnChoices).
var (
	convForceOwn    = false
	convForceChoice = -1
)

var convTactics = []kernels.TacticInfo{
	{Name: convTacticCudnn, Workspace: true,
		Summary: "cuDNN 9 loaded at run time, the fastest algorithm whose workspace fits min(im2col size, --workspace-cap); bias (and FusedConv's Z and Relu) by a kernel of ours; our kernels when cuDNN is missing"},
	{Name: convTacticOwn,
		Summary: "implicit GEMM of ours (float32 FMAs, tensor cores for 16-bit types) or a direct depthwise loop, bias (and FusedConv's Z and Relu) fused, no workspace: nodes cuDNN cannot describe"},
}

func convOps() []*op {
	return []*op{
		{key: kernels.Key("", "Conv"), tactics: convTactics, sel: selectConvFamily(false), bound: boundConvFamily(false)},
		{key: kernels.Key(kernels.DomainMicrosoft, "FusedConv"), tactics: convTactics, sel: selectConvFamily(false), bound: boundConvFamily(false)},
		convTransposeOp(),
	}
}

// convGeo is a Conv or ConvTranspose node in two spatial dims. c and ih x iw are the node's
// input, m and oh x ow its output; the pads are the node's (for ConvTranspose, what is cut off
// the full transposed output at each end).
type convGeo struct {
	transpose          bool
	dt                 graph.DType
	n, c, m, groups    int64
	ih, iw, oh, ow     int64
	kh, kw, sh, sw     int64
	dh, dw             int64
	padT, padL         int64 // begin pads (top, left)
	padB, padR         int64 // end pads
	bias               bool
	sum, relu          bool  // FusedConv's epilogue: Z (input 3) added, then Relu
	ehk, ewk           int64 // the dilated kernel's extent
	cg, mg             int64 // input and output channels per group
	inImg, outImg, wts int64 // elements of one input image, one output image, the weights
}

// newConvGeo normalizes a checked node's geometry to two spatial dims.
func newConvGeo(g kernels.ConvGeom, dt graph.DType, transpose bool) (convGeo, error) {
	cv := convGeo{transpose: transpose, dt: dt, n: g.N, c: g.C, m: g.M, groups: g.Group, bias: g.Bias,
		sum: g.Sum, relu: g.Relu, ih: 1, oh: 1, kh: 1, sh: 1, dh: 1}
	switch len(g.In) {
	case 1:
	case 2:
		cv.ih, cv.oh, cv.kh, cv.sh, cv.dh = g.In[0], g.Out[0], g.Kernel[0], g.Strides[0], g.Dilations[0]
		cv.padT, cv.padB = g.PadBegin[0], g.PadEnd[0]
	default:
		return cv, fmt.Errorf("%d-D convolution: the CUDA kernels take 1-D and 2-D", len(g.In))
	}
	j := len(g.In) - 1
	cv.iw, cv.ow, cv.kw, cv.sw, cv.dw = g.In[j], g.Out[j], g.Kernel[j], g.Strides[j], g.Dilations[j]
	cv.padL, cv.padR = g.PadBegin[j], g.PadEnd[j]
	cv.cg, cv.mg = cv.c/cv.groups, cv.m/cv.groups
	cv.ehk, cv.ewk = (cv.kh-1)*cv.dh+1, (cv.kw-1)*cv.dw+1
	cv.inImg, cv.outImg = cv.c*cv.ih*cv.iw, cv.m*cv.oh*cv.ow // the node's sizes fit (CheckNodeSizes)
	cv.wts = cv.m * cv.cg * cv.kh * cv.kw
	return cv, nil
}

// columns is the implicit GEMM's column count, the batch's output positions.
func (g *convGeo) columns() int64 { return g.n * g.oh * g.ow }

// limits checks what the kernels' 32-bit index arithmetic needs: an image of the input and of
// the output, the weights and the columns below 2^31, and every coordinate a tap computes.
func (g *convGeo) limits() error {
	reach, ok := graph.CheckedMul(max(g.oh, g.ih), max(g.sh, g.sw))
	if ok {
		reach, ok = graph.CheckedAdd(reach, max(g.ehk, g.ewk)+max(g.padT, g.padL, g.padB, g.padR)+max(g.ih, g.iw, g.oh, g.ow))
	}
	if !ok || !fits32(g.inImg, g.outImg, g.wts, g.columns(), reach, g.cg*g.kh*g.kw) {
		return fmt.Errorf("convolution of %d x %d x %d x %d: an image, the weights or the batch's output positions reach 2^31 elements, beyond the CUDA kernels' 32-bit indexing",
			g.n, g.c, g.ih, g.iw)
	}
	return nil
}

// epilogueParams are the epilogue's operands: the bias and Z pointers (null when absent) and
// the Relu flag.
func (g *convGeo) epilogueParams() (bias, z, relu param) {
	bias, z, relu = nullp(), nullp(), i32p(0)
	if g.bias {
		bias = inp(2)
	}
	if g.sum {
		z = inp(3)
	}
	if g.relu {
		relu = i32p(1)
	}
	return bias, z, relu
}

// params are the own kernels' parameters: x, w, the bias, Z, y, then csrc/conv.cu CONV_PARAMS.
func (g *convGeo) params() []param {
	bias, z, relu := g.epilogueParams()
	return []param{inp(0), inp(1), bias, z, outp(0), i64p(g.n), pack32(g.c, g.m), pack32(g.ih, g.iw), pack32(g.oh, g.ow),
		pack32(g.kh, g.kw), pack32(g.sh, g.sw), pack32(g.padT, g.padL), pack32(g.dh, g.dw), pack32(g.cg, g.mg), relu}
}

// Own kernels' tiles (csrc/conv.cu): 64 output channels by 64 output positions a block.
const convTile = 64

// ownProgram is the own tactic's launch: the depthwise kernel for a depthwise Conv, otherwise
// the implicit GEMM, a block per tile of each group's product. Nothing runs for an empty output.
func (g *convGeo) ownProgram(t kernels.Target) (program, error) {
	if g.n*g.outImg == 0 {
		return nil, nil
	}
	if err := g.limits(); err != nil {
		return nil, err
	}
	if !g.transpose && g.groups == g.c && g.groups > 1 {
		return program{{kernel: "carve_conv_dw_" + dtName(g.dt), grid: grid1(g.n*g.outImg, 1, t), block: block1, params: g.params()}}, nil
	}
	cols, rows := (g.columns()+convTile-1)/convTile, (g.mg+convTile-1)/convTile
	if rows > 65535 || g.groups > 65535 {
		return nil, fmt.Errorf("%d groups of %d output channels: the CUDA kernels take at most 65535 groups and 4194240 channels a group", g.groups, g.mg)
	}
	name, block := "carve_conv", Dim3{X: 256, Y: 1, Z: 1}
	if g.transpose {
		name = "carve_convt"
	}
	if g.dt == graph.Float32 {
		name += "_simt_f32"
	} else {
		name, block = name+"_wmma_"+dtName(g.dt), Dim3{X: 128, Y: 1, Z: 1}
	}
	grid := Dim3{X: uint32(cols), Y: uint32(rows), Z: uint32(g.groups)}
	return program{{kernel: name, grid: grid, block: block, params: g.params()}}, nil
}

// epilogueProgram finishes the output cuDNN wrote: the bias, FusedConv's Z (unless withoutZ),
// Relu, by carve_conv_epilogue_*; nil without any of them (or for an empty output).
func (g *convGeo) epilogueProgram(t kernels.Target, withoutZ bool) program {
	total, hw := g.n*g.outImg, g.oh*g.ow
	sum := g.sum && !withoutZ
	if !g.bias && !sum && !g.relu || total == 0 {
		return nil
	}
	bias, z, relu := g.epilogueParams()
	if !sum {
		z = nullp()
	}
	return program{{kernel: "carve_conv_epilogue_" + dtName(g.dt), grid: grid1(total, 1, t), block: block1,
		params: []param{outp(0), bias, z, i64p(total), i64p(g.m), i64p(hw), relu}}}
}

// convDesc is a convolution as cuDNN is told it: always the forward convolution x -> y with
// filter [k, c/groups, r, s] in NCHW, which Conv runs forward and ConvTranspose backward (its
// input is y, its output x). WsCap is the declared workspace, the most an algorithm may use. It
// is comparable: with the device, it keys the plans cudnn_cuda.go makes.
type convDesc struct {
	Backward               bool
	DType                  graph.DType
	N, C, H, W             int32 // x
	K, R, S                int32 // filter: k maps of r x s (c / groups channels each)
	P, Q                   int32 // y's height and width (k channels)
	PadH, PadW, StrH, StrW int32
	DilH, DilW, Groups     int32
	WsCap                  int64
}

// forwardOut is the output size of a forward convolution over in with pad p at both ends, or -1
// when the padded input is shorter than the kernel's extent ek.
func forwardOut(in, p, ek, s int64) int64 {
	if in+2*p < ek {
		return -1
	}
	return (in+2*p-ek)/s + 1
}

// cudnnDesc is the node as cuDNN's forward convolution (ok false when cuDNN cannot describe
// it). cuDNN's pads are the same at both ends: the node's begin pads are used, which gives the
// node's windows exactly when the forward convolution over them has the node's size (then any
// end pad beyond the begin pad is never reached, and any end pad short of it is not needed).
func (g *convGeo) cudnnDesc(t kernels.Target) (convDesc, bool) {
	if g.n < 1 || g.c < 1 || g.m < 1 {
		return convDesc{}, false
	}
	if major, ok := archMajor(t.Arch); ok && major < 8 && g.dt == graph.BFloat16 {
		return convDesc{}, false
	}
	// the forward convolution x -> y: the node's, or for ConvTranspose the one it is the adjoint of
	x, y, filter := [3]int64{g.c, g.ih, g.iw}, [3]int64{g.m, g.oh, g.ow}, g.m
	if g.transpose {
		x, y, filter = g.transposeForward()
	}
	if forwardOut(x[1], g.padT, g.ehk, g.sh) != y[1] || forwardOut(x[2], g.padL, g.ewk, g.sw) != y[2] {
		return convDesc{}, false
	}
	if !fits32(g.n*g.inImg, g.n*g.outImg, g.wts, g.padT, g.padL, g.sh, g.sw, g.dh, g.dw, g.groups, g.kh, g.kw) {
		return convDesc{}, false
	}
	return convDesc{Backward: g.transpose, DType: g.dt,
		N: int32(g.n), C: int32(x[0]), H: int32(x[1]), W: int32(x[2]),
		K: int32(filter), R: int32(g.kh), S: int32(g.kw), P: int32(y[1]), Q: int32(y[2]),
		PadH: int32(g.padT), PadW: int32(g.padL), StrH: int32(g.sh), StrW: int32(g.sw),
		DilH: int32(g.dh), DilW: int32(g.dw), Groups: int32(g.groups)}, true
}

// policyBytes is the policy bound of the cudnn tactic's workspace at the node's shapes: the
// explicit im2col (Conv) or col2im (ConvTranspose) matrix of the batch in the node's type.
func (g *convGeo) policyBytes() (int64, error) {
	if g.transpose {
		return kernels.Product(g.n, g.m, g.kh, g.kw, g.ih, g.iw, g.dt.Size())
	}
	return kernels.Product(g.n, g.c, g.kh, g.kw, g.oh, g.ow, g.dt.Size())
}

// convCall is the cudnn tactic's step: the convolution through cuDNN, or own's launches when
// cuDNN cannot run it (cudnn_cuda.go), then the epilogue's.
type convCall struct {
	label string // the node, for messages
	desc  convDesc
	own   program // the own tactic's launches
	epi   program // carve_conv_epilogue_* after cuDNN; nil without a bias, Z or Relu
	// epiInPlace is epi without Z, for a Z in place of the output: cuDNN then blends the Z the
	// output holds into its sum (beta 1), reading each element before writing it, and the
	// epilogue adds the bias and applies Relu; nil without a bias or Relu.
	epiInPlace program
	sum        bool // the node has FusedConv's Z (input 3), which measuring gives scratch
	// epilogue (convEpi* flags), arch and sms key its recorded times (convtimes.go)
	epilogue int
	arch     string
	sms      int
}

// programs are the launches the step may make, for the tests that check launches.
func (c *convCall) programs() []program { return []program{c.own, c.epi, c.epiInPlace} }

func selectConvFamily(transpose bool) func(n *kernels.Node, t kernels.Target) (plan, error) {
	return func(n *kernels.Node, t kernels.Target) (plan, error) {
		var g kernels.ConvGeom
		var err error
		if transpose {
			g, err = kernels.CheckConvTranspose(n)
		} else {
			g, err = kernels.CheckConv(n)
		}
		if err != nil {
			return plan{}, err
		}
		dt := n.Inputs[0].DType
		if !isFloat(dt) {
			return plan{}, errDType("the input", dt, "float32, float16 or bfloat16")
		}
		geo, err := newConvGeo(g, dt, transpose)
		if err != nil {
			return plan{}, err
		}
		own, err := geo.ownProgram(t)
		if err != nil {
			return plan{}, err
		}
		// FusedConv's Z in place of Y: the own kernels read Z's element in the store that writes
		// it (no __restrict__ on either), and the cudnn tactic has cuDNN blend it (convCall).
		var inPlace []kernels.InPlace
		if geo.sum {
			inPlace = []kernels.InPlace{{Output: 0, Input: 3}}
		}
		d, ok := geo.cudnnDesc(t)
		if !ok {
			return plan{tactic: convTacticOwn, prog: own, inPlace: inPlace}, nil
		}
		policy, err := geo.policyBytes()
		if err != nil {
			return plan{}, err
		}
		d.WsCap = t.CappedWorkspace(policy)
		label := n.Op
		if n.Name != "" {
			label = n.Name + ":" + n.Op
		}
		call := &convCall{label: label, desc: d, own: own, epi: geo.epilogueProgram(t, false), sum: geo.sum,
			epilogue: geo.epilogueFlags(), arch: t.Arch, sms: t.SMs}
		if geo.sum {
			call.epiInPlace = geo.epilogueProgram(t, true)
		}
		p := plan{tactic: convTacticCudnn, measured: convPart, prog: program{{call: call}}, inPlace: inPlace}
		if d.WsCap > 0 {
			p.parts = []alloc.Part{{Name: convPart, Size: d.WsCap}}
		}
		return p, nil
	}
}

// boundConvFamily is W: the cudnn tactic's cap at the range's largest dims (the policy bound
// grows with each), under the Target's cap; own needs nothing.
func boundConvFamily(transpose bool) func(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
	return func(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
		x, okX := r.Input(0)
		w, okW := r.Input(1)
		if !okX || !okW || len(x.Dims) < 3 || len(w.Dims) != len(x.Dims) {
			return kernels.Bound{}, fmt.Errorf("%s needs X and W of one rank, 3 or more", r.Op)
		}
		if !isFloat(x.DType) {
			return kernels.Bound{}, nil // refused at Select
		}
		// Conv: N, C, the kernel, the output's spatial dims; ConvTranspose: N, M, the kernel, the
		// input's spatial dims (policyBytes)
		spatial := x.Dims[2:]
		factors := []int64{x.Dims[0].Hi, x.Dims[1].Hi}
		if transpose {
			factors = []int64{x.Dims[0].Hi, w.Dims[1].Hi, max(r.Attrs.Int("group", 1), 1)} // M = M/group * group
		} else {
			y, ok := r.Output(0)
			if !ok || len(y.Dims) != len(x.Dims) {
				return kernels.Bound{}, fmt.Errorf("Conv needs the output's range")
			}
			spatial = y.Dims[2:]
		}
		for _, ds := range [][]kernels.DimRange{w.Dims[2:], spatial} {
			for _, d := range ds {
				factors = append(factors, d.Hi)
			}
		}
		policy, err := kernels.Product(append(factors, x.DType.Size())...)
		if err != nil {
			if t.WorkspaceCap == nil {
				return kernels.Bound{}, err
			}
			policy = *t.WorkspaceCap
		}
		ws := t.CappedWorkspace(policy)
		if ws == 0 {
			return kernels.Bound{}, nil
		}
		return recipeBound(convTacticCudnn, []alloc.Part{{Name: convPart, Size: ws}})
	}
}

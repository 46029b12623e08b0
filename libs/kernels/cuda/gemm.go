package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// GEMMs (MatMul, Gemm) run through cuBLASLt with fp32 accumulation for float32, float16 and
// bfloat16 operands (tactic cublaslt), except a product of a few rows against a weight, which
// runs as one kernel of ours (tactic gemv, gemv.go).
//
// Workspace: each invocation gets its own, carved from its Recipe, and passes it to cuBLASLt
// together with its stream; nothing is cached per process (two GEMMs on two streams that
// shared one workspace are TransformerEngine's corruption, see the seed test). The Recipe is a
// fixed cap per tactic and architecture, which is also the largest workspace the algorithm
// heuristic may choose an algorithm for, so R and W are known offline, with no device:
// R = W = the cap. The cap is NVIDIA's recommendation for cuBLAS workspaces (cuBLAS API
// reference, cublasSetWorkspace): 32 MiB on Hopper (sm_90) and newer, 4 MiB on older GPUs;
// with less, cuBLASLt falls back to algorithms without split-K or with smaller tiles. The
// chosen algorithm's real need, often far less, is measured on the device (AlgoWorkspace), so
// that a later planning step can shrink the carve to it.

// gemmPart names the workspace part that cuBLASLt gets whole, in a GEMM's Recipe and in those of
// kernels whose programs hold products of their own (partProduct).
const gemmPart = "cublas"

// Workspace caps of the cublaslt tactic.
const (
	GemmWorkspaceHopper int64 = 32 << 20 // sm_90 and newer
	GemmWorkspaceOlder  int64 = 4 << 20  // before sm_90
)

const gemmTactic = "cublaslt"

// gemmWorkspace is the cublaslt tactic's workspace cap on t.
func gemmWorkspace(t kernels.Target) int64 {
	if major, ok := archMajor(t.Arch); ok && major < 9 {
		return GemmWorkspaceOlder
	}
	return GemmWorkspaceHopper
}

// archMajor reads the compute capability's major version from "sm_XY" (X may be two digits).
func archMajor(arch string) (int, bool) {
	s, ok := strings.CutPrefix(arch, "sm_")
	s = strings.TrimRight(s, "abf")
	if !ok || len(s) < 2 {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, false
	}
	return v / 10, true
}

// gemmDTypes are the operand types cuBLASLt runs with fp32 accumulation here.
func gemmDType(dt graph.DType) bool {
	return dt == graph.Float32 || dt == graph.Float16 || dt == graph.BFloat16
}

// gemmMode is how a product's batches reach cuBLASLt.
type gemmMode uint8

const (
	gemmSingle  gemmMode = iota // one product (no batch, or A's batches folded into its rows)
	gemmStrided                 // one strided-batched call; a broadcast operand has stride 0
	gemmLoop                    // one call per output batch (mixed broadcasts such as [2,1] x [1,3])
)

// cMode is how Gemm's C reaches the product.
type cMode uint8

const (
	cNone      cMode = iota // no C, or beta == 0
	cFull                   // C is M x N: cuBLASLt reads it
	cBroadcast              // C broadcasts: a kernel first expands it into Y, which cuBLASLt reads
	// C is a row of N ([N] or [1, N]: a bias) and beta 1: cuBLASLt's bias epilogue adds it in
	// the product's one launch; where cuBLASLt has no algorithm with that epilogue, it runs
	// as cBroadcast (csm 0, csn 1).
	cBias
)

// gemmInstance is one MatMul or Gemm node, row-major: Y[b] = alpha*op(A[b])*op(B[b]) + beta*C.
// It is immutable and safe for concurrent use.
type gemmInstance struct {
	kernel         string // recipe name
	dt             graph.DType
	m, n, k        int64
	transA, transB bool
	alpha, beta    float32
	mode           gemmMode
	batch          int64 // output batches (1 for gemmSingle)
	sa, sb         int64 // gemmStrided: element strides between batches (0: broadcast)
	loopDims       []int64
	loopSA, loopSB []int64 // gemmLoop: per batch dim, the operands' element strides
	c              cMode
	csm, csn       int64 // cBroadcast: C's element strides along Y's rows and columns
	ws             int64
	pick           int     // tests only: > 0 picks the best of that many algorithms that use workspace
	algoIndex      int     // tests only: > 0 takes the heuristic's result algoIndex - 1 (TestGemmAlgoSweep)
	gemv           program // the gemv tactic's launch (gemv.go); nil: cublaslt
	// bWeight: B is one of the model's initializers (kernels.Value.Initializer), so gemv may
	// start reading it before the kernel ahead of it has finished.
	bWeight bool
}

func (g *gemmInstance) Tactic() string {
	if g.gemv != nil {
		return gemvTactic
	}
	return gemmTactic
}

// Recipe is cublaslt's cap: one part that cuBLASLt gets whole; gemv needs no workspace.
func (g *gemmInstance) Recipe() alloc.Recipe {
	if g.gemv != nil {
		return alloc.Recipe{Kernel: g.kernel}
	}
	return alloc.Recipe{Kernel: g.kernel, Parts: []alloc.Part{{Name: gemmPart, Size: g.ws}}}
}

// Run queues the product on s with the invocation's workspace.
func (g *gemmInstance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	if g.gemv != nil {
		if len(in) < 2 || len(out) < 1 || (g.c != cNone && len(in) < 3) {
			return &kernels.RunError{Kernel: g.kernel, Err: kernels.ErrRunArity}
		}
		if err := g.gemv.exec(s, in, out, ws, nil); err != nil {
			return &kernels.RunError{Kernel: g.kernel, Err: err}
		}
		return nil
	}
	return runGemm(g, in, out, ws, s)
}

// MeasuredPart is the cublaslt tactic's one part, its cap; gemv has none.
func (g *gemmInstance) MeasuredPart() int {
	if g.gemv != nil {
		return -1
	}
	return 0
}

// MeasureWorkspace is the workspace the algorithm cuBLASLt chooses on b's device really needs
// (at most the Recipe's cap): what a planning step on the GPU may shrink the carve to. gemv
// needs none.
func (g *gemmInstance) MeasureWorkspace(b kernels.Backend) (int64, error) {
	if g.gemv != nil {
		return 0, nil
	}
	return measureGemm(g, b)
}

// partProduct is a step of a kernel whose program holds a product of its own (the contrib
// Attention's QKV projection, GatedMatMul's gate and up): m rows of input 0, from row row on, as
// A [m, k] times input weight as a row-major [k, n] B, with cuBLASLt into dst (a workspace part,
// or an output at a byte offset), using the node's own "cublas" part.
type partProduct struct {
	label   string // the product's name in errors
	dt      graph.DType
	m, n, k int64
	row     int64 // A's first row
	weight  int
	dst     param
}

func (c *partProduct) call(s alloc.Stream, in, out []kernels.Tensor, ws *alloc.Workspace) error {
	y := addr(c.dst, in, out, ws)
	if y == 0 || len(in) <= c.weight {
		return fmt.Errorf("cuda: %s: its destination or input %d is missing", c.label, c.weight)
	}
	g := c.gemm(0)
	a := in[0]
	a.Addr = a.Addr.Add(c.row * c.k * int64(c.dt.Size()))
	operands := [2]kernels.Tensor{a, in[c.weight]}
	dst := [1]kernels.Tensor{{DType: c.dt, Addr: y}}
	return runGemm(g, operands[:], dst[:], ws, s)
}

// gemm is the product as a GEMM instance with a cuBLASLt workspace of ws bytes (measureGemm's
// question; runGemm takes the size of the part it is given).
func (c *partProduct) gemm(ws int64) *gemmInstance {
	return &gemmInstance{kernel: c.label, dt: c.dt, m: c.m, n: c.n, k: c.k, alpha: 1, mode: gemmSingle, batch: 1, ws: ws}
}

func (c *partProduct) need(b kernels.Backend, wsCap int64) (int64, error) {
	return measureGemm(c.gemm(wsCap), b)
}

// measuredCall is a host call whose cuBLASLt product runs within the node's "cublas" part at
// whatever size it is carved, and can say what it needs of a part of wsCap bytes on b's device:
// a program holding one makes its instance a WorkspaceMeasurer (partProduct, nbitsGemm).
type measuredCall interface {
	hostCall
	need(b kernels.Backend, wsCap int64) (int64, error)
}

// gemmKernel is the MatMul or Gemm kernel.
type gemmKernel struct {
	key kernels.OpKey
	sel func(n *kernels.Node, t kernels.Target) (*gemmInstance, error)
}

func (k *gemmKernel) Op() kernels.OpKey { return k.key }

func (k *gemmKernel) Backend() string { return kernels.BackendCUDA }

func (k *gemmKernel) Tactics() []kernels.TacticInfo {
	return []kernels.TacticInfo{{Name: gemmTactic, Workspace: true,
		Summary: "cuBLASLt, fp32 accumulation; workspace capped at 32 MiB on sm_90+ (4 MiB before), NVIDIA's recommendation"},
		{Name: gemvTactic,
			Summary: "a few rows of fp16/bf16 against a [K, N] weight on sm_90+ where it measured faster than cuBLASLt (decode steps): one kernel, split K meeting in a thread block cluster, no workspace"}}
}

func (k *gemmKernel) Select(n *kernels.Node, t kernels.Target) (kernels.Instance, error) {
	g, err := k.sel(n, t)
	if err != nil {
		return nil, &kernels.NodeError{Node: n.Name, Op: k.key, Err: err}
	}
	g.ws = gemmWorkspace(t)
	g.bWeight = len(n.Inputs) > 1 && n.Inputs[1].Initializer
	selectGemv(g, t)
	g.kernel = n.Name + "/" + g.Tactic()
	return g, nil
}

// Bound is cublaslt's cap whatever the shapes: every product within r that runs as cublaslt gets
// that Recipe, and gemv needs none.
func (k *gemmKernel) Bound(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
	for i := 0; i < 2; i++ {
		v, ok := r.Input(i)
		if !ok || !gemmDType(v.DType) {
			return kernels.Bound{}, &kernels.NodeError{Node: r.Name, Op: k.key,
				Err: fmt.Errorf("input %d must be float32, float16 or bfloat16", i)}
		}
	}
	return kernels.Bound{Bytes: gemmWorkspace(t), Tactic: gemmTactic}, nil
}

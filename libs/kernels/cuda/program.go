package cuda

import (
	"fmt"
	"slices"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

// A kernel's execution is decided entirely at Select: a program of kernel launches whose grids,
// blocks, shared memory and scalar parameters are fixed, and whose pointer parameters name the
// node's inputs, outputs and workspace parts. Run only resolves those names to the addresses of
// the tensors it is given and launches, so Select, Bound and the launch plan are pure Go and are
// tested without a GPU (the tests record launches instead of making them).

// refKind says where a parameter's value comes from.
type refKind uint8

const (
	litRef refKind = iota // a literal Arg
	inRef                 // the address of input idx (0 when absent)
	outRef                // the address of output idx (0 when absent)
	wsRef                 // the address of workspace part idx
)

// param is one kernel parameter: a literal, or the address of a tensor plus a byte offset.
type param struct {
	kind refKind
	idx  int
	off  int64
	arg  Arg
}

func lit(a Arg) param              { return param{arg: a} }
func i64p(v int64) param           { return lit(Int64Arg(v)) }
func i32p(v int) param             { return lit(Int32Arg(int32(v))) }
func f32p(v float32) param         { return lit(Float32Arg(v)) }
func f64p(v float64) param         { return lit(Float64Arg(v)) }
func inp(i int) param              { return param{kind: inRef, idx: i} }
func outp(i int) param             { return param{kind: outRef, idx: i} }
func wsp(i int) param              { return param{kind: wsRef, idx: i} }
func nullp() param                 { return lit(PtrArg(0)) }
func (p param) at(off int64) param { p.off += off; return p }

// pack32 is two values below 2^31 in one long long parameter: lo | hi << 32 (the kernels read
// them with lo32 and hi32). Select checks the bounds with fits32 first.
func pack32(lo, hi int64) param { return i64p(int64(uint64(uint32(lo)) | uint64(uint32(hi))<<32)) }

// fits32 reports whether every value is in [0, 2^31), the range pack32 and the kernels' int
// parameters carry.
func fits32(vs ...int64) bool {
	for _, v := range vs {
		if v < 0 || v >= 1<<31 {
			return false
		}
	}
	return true
}

// indexDims are in's and out's shapes as the maxRank-long dims of a kernel that walks the output
// element by element and finds each one's input (Slice, Pad, Resize), every dim checked to fit
// the kernels' int32 index arithmetic. Both ranks are at most maxRank (the caller checks).
func indexDims(in, out []int64) (ind, od [maxRank]int64, err error) {
	copy(ind[:], in)
	copy(od[:], out)
	if !fits32(ind[:]...) || !fits32(od[:]...) {
		return ind, od, fmt.Errorf("dims of %v or %v are too large for the CUDA kernel", in, out)
	}
	return ind, od, nil
}

// hostCall is a step that is not a kernel of ours: a library call (cuBLASLt) queued on the
// stream. call resolves its tensors like a launch does.
type hostCall interface {
	call(s alloc.Stream, in, out []kernels.Tensor, ws *alloc.Workspace) error
}

// step is one kernel launch, or one hostCall when call is set.
type step struct {
	call        hostCall
	kernel      string
	grid, block Dim3
	shared      uint32
	params      []param
	// skipSame, when both are references, skips the launch if they hold the same address: an
	// output the planner made a view of its input, a present cache that is its past.
	skipSame [2]param
	// align > 1 asks that every pointer parameter (or those at the indices alignOnly lists) be a
	// multiple of align (the kernel moves units that wide); when one is not, fallback runs instead.
	align     int64
	alignOnly []int
	fallback  *step
	// dependent launches the kernel with programmatic dependent launch (launchDependent): it
	// may start while the kernel ahead of it on the stream still runs, and waits for it
	// (pdl_wait) before reading its output. Only pdlKernels may be launched so.
	dependent bool
}

// pdlKernels name (by prefix) the kernels that keep csrc/common.cuh's rules for a dependent
// launch: nothing but weights read and nothing written to global memory before pdl_wait. A
// kernel without pdl_wait, launched dependent, would race the kernel ahead of it;
// TestDependentSteps checks that every dependent step of the test cases is one of these.
var pdlKernels = []string{"carve_gemv_", "carve_norm_rows_", "carve_swiglu_", "carve_gqa_dec_", "carve_gqa_decode_combine_"}

// program is an instance's launches, run in order on one stream.
type program []step

// launcher is the launch function: launch in programs, a recorder in tests.
type launcher func(s alloc.Stream, kernel string, grid, block Dim3, sharedBytes uint32, args ...Arg) error

// addr resolves a reference parameter.
func addr(p param, in, out []kernels.Tensor, ws *alloc.Workspace) alloc.Ptr {
	var base alloc.Ptr
	switch p.kind {
	case inRef:
		if p.idx < len(in) {
			base = in[p.idx].Addr
		}
	case outRef:
		if p.idx < len(out) {
			base = out[p.idx].Addr
		}
	case wsRef:
		if ws != nil && p.idx < len(ws.Parts()) {
			base = ws.Parts()[p.idx].Ptr
		}
	}
	if base == 0 {
		return 0
	}
	return base.Add(p.off)
}

// exec launches the program's steps on s with the package's launch, or with record when it is
// not nil (tests): a call through a function value makes its variadic arguments escape, and
// then every run of a program allocated them on the Go heap (one allocation per node and run in
// eager mode).
func (pr program) exec(s alloc.Stream, in, out []kernels.Tensor, ws *alloc.Workspace, record launcher) error {
	var args [MaxArgs]Arg
	for i := range pr {
		st := &pr[i]
		if st.call != nil {
			if err := st.call.call(s, in, out, ws); err != nil {
				return err
			}
			continue
		}
		if st.skipSame[0].kind != litRef && st.skipSame[1].kind != litRef {
			a, b := addr(st.skipSame[0], in, out, ws), addr(st.skipSame[1], in, out, ws)
			if a != 0 && a == b {
				continue
			}
		}
		for st.align > 1 && st.fallback != nil && !st.aligned(in, out, ws) {
			st = st.fallback
		}
		if len(st.params) > MaxArgs {
			return &LaunchError{Kernel: st.kernel, Err: fmt.Errorf("%d parameters", len(st.params))}
		}
		for j, p := range st.params {
			if p.kind == litRef {
				args[j] = p.arg
			} else {
				args[j] = PtrArg(addr(p, in, out, ws))
			}
		}
		if record == nil {
			// The package's launch, called statically: args stays on the stack.
			if st.dependent {
				if err := launchDependent(s, st.kernel, st.grid, st.block, st.shared, args[:len(st.params)]...); err != nil {
					return err
				}
				continue
			}
			if err := launch(s, st.kernel, st.grid, st.block, st.shared, args[:len(st.params)]...); err != nil {
				return err
			}
			continue
		}
		// A recorder may keep what it is given: it gets a copy, on the heap.
		rec := args
		if err := record(s, st.kernel, st.grid, st.block, st.shared, rec[:len(st.params)]...); err != nil {
			return err
		}
	}
	return nil
}

func (st *step) aligned(in, out []kernels.Tensor, ws *alloc.Workspace) bool {
	for j, p := range st.params {
		if st.alignOnly != nil && !slices.Contains(st.alignOnly, j) {
			continue
		}
		if p.kind != litRef && int64(addr(p, in, out, ws))%st.align != 0 {
			return false
		}
	}
	return true
}

// Launch geometry. Grid-stride kernels get at most gridWaves blocks per multiprocessor.
const (
	threads   = 256
	gridWaves = 16
)

// grid1 is a 1-D grid of threads-thread blocks for n work items, each thread taking per items
// per pass, capped for grid-stride kernels.
func grid1(n, per int64, t kernels.Target) Dim3 {
	per = max(per, 1)
	blocks := (n + threads*per - 1) / (threads * per)
	blocks = min(max(blocks, 1), int64(max(t.SMs, 1))*gridWaves)
	return Dim3{X: uint32(blocks), Y: 1, Z: 1}
}

var block1 = Dim3{X: threads, Y: 1, Z: 1}

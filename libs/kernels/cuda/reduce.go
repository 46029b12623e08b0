package cuda

import (
	"fmt"

	"carve.dev/libs/kernels"
)

// redOp is an op code of carve_reduce_* (csrc/reduce.cu, enum RedOp).
type redOp int

const (
	rSum redOp = iota
	rMean
	rMax
	rMin
	rProd
	rSumSquare
	rL1
	rL2
	rLogSumExp
	rArgMax
	rArgMin
)

// identityOnUnit reports whether reducing a dim of size 1 leaves values unchanged, so that such
// a dim may or may not be among the axes without changing the result.
func (o redOp) identityOnUnit() bool {
	return o == rSum || o == rMean || o == rMax || o == rMin || o == rProd || o == rArgMax || o == rArgMin
}

// reduceAxesOnDevice recovers which input dims are reduced when the axes are a device tensor
// (kernels.ReduceNode.AxesInput) from the input and output shapes, which the graph inferred from
// them; a node whose shapes leave them ambiguous in a way that changes the result is refused.
func reduceAxesOnDevice(n *kernels.Node, o redOp, in, out []int64, keep bool) ([]bool, error) {
	r := len(in)
	red := make([]bool, r)
	k := int(n.Inputs[1].Shape[0])
	if keep {
		if len(out) != r {
			return nil, fmt.Errorf("output %v for input %v with keepdims", out, in)
		}
		for i := range in {
			switch {
			case out[i] == in[i] && in[i] != 1:
			case out[i] == 1 && in[i] != 1:
				red[i] = true
			case in[i] == 1 && out[i] == 1:
				if !o.identityOnUnit() {
					return nil, fmt.Errorf("axes are a device tensor and input dim %d is 1: whether it is reduced changes the result; give the axes as an initializer the graph folds", i)
				}
			default:
				return nil, fmt.Errorf("output %v does not reduce input %v", out, in)
			}
		}
		return red, nil
	}
	// keepdims=0: find the k dims whose removal turns in into out; refuse a match that is
	// ambiguous in a way that changes the result
	var matches [][]bool
	var walk func(i, j, removed int, cur []bool)
	walk = func(i, j, removed int, cur []bool) {
		if i == r {
			if j == len(out) && removed == k {
				matches = append(matches, append([]bool(nil), cur...))
			}
			return
		}
		if j < len(out) && out[j] == in[i] {
			walk(i+1, j+1, removed, cur)
		}
		cur[i] = true
		walk(i+1, j, removed+1, cur)
		cur[i] = false
	}
	walk(0, 0, 0, make([]bool, r))
	if len(matches) == 0 {
		return nil, fmt.Errorf("output %v does not reduce input %v over %d axes", out, in, k)
	}
	for _, m := range matches[1:] {
		for i := range m {
			if m[i] != matches[0][i] && (in[i] != 1 || !o.identityOnUnit()) {
				return nil, fmt.Errorf("axes are a device tensor and shapes %v -> %v do not say which %d dims are reduced; give the axes as an initializer the graph folds", in, out, k)
			}
		}
	}
	return matches[0], nil
}

func selectReduce(o redOp) func(n *kernels.Node, t kernels.Target) (plan, error) {
	return func(n *kernels.Node, t kernels.Target) (plan, error) {
		rn, err := kernels.CheckReduce(n)
		if err != nil {
			return plan{}, err
		}
		x := n.Inputs[0]
		if !isFloat(x.DType) && !isInt(x.DType) {
			return plan{}, errDType("the input", x.DType, "float32, float16, bfloat16, int64 or int32")
		}
		red, identity := rn.Reduced, rn.Identity
		if rn.AxesInput {
			ov := n.Outputs[0]
			if red, err = reduceAxesOnDevice(n, o, x.Shape, ov.Shape, rn.Keep); err != nil {
				return plan{}, err
			}
			if err := kernels.CheckOutput(n, 0, ov.DType, kernels.ReducedShape(x.Shape, red, false, rn.Keep)); err != nil {
				return plan{}, err
			}
		}
		if identity {
			prog, err := denseCopy(0, 0, x.DType, x.Shape, t)
			return plan{tactic: "direct", prog: prog}, err
		}
		ist := stridesOf(x.Shape)
		var kd, ks, rd, rs []int64
		for i, d := range x.Shape {
			if red[i] {
				rd, rs = append(rd, d), append(rs, ist[i])
			} else {
				kd, ks = append(kd, d), append(ks, ist[i])
			}
		}
		kl, err := newLayout(kd, ks)
		if err != nil {
			return plan{}, err
		}
		rl, err := newLayout(rd, rs)
		if err != nil {
			return plan{}, err
		}
		nOut, count := numel(kd), numel(rd)
		if nOut == 0 {
			return plan{tactic: "direct"}, nil
		}
		if count == 0 && (o == rArgMax || o == rArgMin) {
			return plan{}, fmt.Errorf("%s over an empty axis", n.Op)
		}
		mode := 0 // reduce.cu's modes: 0 a thread per output, 1 rows, 2 columns
		grid, block := grid1(nOut, 1, t), block1
		switch {
		case rl.rank == 1 && rl.st[0][0] == 1 && count >= 64:
			mode = 1
			bt := min(int64(threads), (count+31)/32*32)
			block = Dim3{X: uint32(bt), Y: 1, Z: 1}
			grid = Dim3{X: uint32(min(nOut, int64(t.SMs)*gridWaves)), Y: 1, Z: 1}
		case rl.rank == 1 && count >= 64 && o != rArgMax && o != rArgMin && o != rLogSumExp:
			mode = 2
			block, grid = columnsLaunch(nOut, count, t)
		}
		ps := []param{outp(0), inp(0), i64p(nOut), i64p(count), i32p(int(o)), i32p(mode), i32p(boolInt(rn.SelectLast))}
		for _, l := range []layout{kl, rl} {
			lp := l.params()
			ps = append(ps, lp[:1+3+maxRank]...) // rank, dims, operand 0's strides
		}
		st := step{kernel: "carve_reduce_" + dtName(x.DType), grid: grid, block: block, params: ps}
		if mode == 1 && (o == rArgMax || o == rArgMin) && isFloat(x.DType) && count*x.DType.Size()%16 == 0 {
			// Rows of whole 16-byte vectors, row o at o * count (the reduced dims are innermost and
			// contiguous): carve_argmax_rows, falling back to mode 1 when x is not 16-byte aligned.
			// A few long rows (a decode step's greedy choice) take a cluster of argmaxSplit
			// blocks a row: carve_argmax_split.
			base := st
			last := i32p(boolInt(rn.SelectLast))
			st = step{kernel: "carve_argmax_rows_" + dtName(x.DType), grid: grid, block: Dim3{X: argmaxThreads(count, x.DType.Size()), Y: 1, Z: 1},
				params: []param{outp(0), inp(0), i64p(nOut), i64p(count), i32p(int(o)), last},
				align:  16, alignOnly: []int{1}, fallback: &base}
			if argmaxSplits(nOut, count, t) {
				st = step{kernel: "carve_argmax_split_" + dtName(x.DType), grid: Dim3{X: argmaxSplit, Y: uint32(nOut), Z: 1},
					block:  Dim3{X: argmaxThreads((count+argmaxSplit-1)/argmaxSplit, x.DType.Size()), Y: 1, Z: 1},
					params: []param{outp(0), inp(0), i64p(count), i32p(int(o)), last},
					align:  16, alignOnly: []int{1}, fallback: &base}
			}
		}
		return plan{tactic: "direct", prog: program{st}}, nil
	}
}

// argmaxSplit is csrc ARGMAX_SPLIT, the blocks (one cluster) carve_argmax_split gives a row.
const argmaxSplit = 8

// argmaxSplits reports whether nOut rows of count elements take carve_argmax_split on t: on
// sm_90 and newer (clusters), when the rows' clusters fit the multiprocessors at once and each
// block still gets 2048 elements or more. A row of 151936 on one multiprocessor (carve_argmax_rows)
// took 18 us on an H200, bound by its comparisons.
func argmaxSplits(nOut, count int64, t kernels.Target) bool {
	if major, ok := archMajor(t.Arch); !ok || major < 9 {
		return false
	}
	return nOut*argmaxSplit <= int64(t.SMs) && count >= argmaxSplit*2048
}

// argmaxThreads is carve_argmax_rows' block for rows of count elements of es bytes: a thread per
// 4 vectors of 16 bytes, a multiple of 32 from 32 to 1024.
func argmaxThreads(count, es int64) uint32 {
	vecs := count * es / 16
	return uint32(min(max((vecs+4*32-1)/(4*32)*32, 32), 1024))
}

// columnsLaunch sizes reduce.cu's columns mode: a block per 32 consecutive outputs, with the
// reduced dim split over 4 to 32 threads (blockDim.y), as many as keep each thread's share at
// 16 or more elements and the grid short of a few waves of blocks. A mean over the 2048 positions
// of [1, 2, 2048, 128] gets 8 blocks of 32 x 32 threads instead of 256 threads walking 2048
// elements each (which took 0.74 ms on an H200).
func columnsLaunch(nOut, count int64, t kernels.Target) (block, grid Dim3) {
	blocks := (nOut + 31) / 32
	y := int64(4) // count >= 64: 16 elements each at least
	for y < 32 && 2*y*16 <= count && blocks*y < int64(max(t.SMs, 1))*8 {
		y *= 2
	}
	return Dim3{X: 32, Y: uint32(y), Z: 1}, Dim3{X: uint32(blocks), Y: 1, Z: 1}
}

func reduceOps() []*op {
	mk := func(name string, o redOp) *op {
		return &op{key: kernels.Key("", name), tactics: direct, sel: selectReduce(o)}
	}
	return []*op{
		mk("ReduceSum", rSum), mk("ReduceMean", rMean), mk("ReduceMax", rMax), mk("ReduceMin", rMin),
		mk("ReduceProd", rProd), mk("ReduceSumSquare", rSumSquare), mk("ReduceL1", rL1), mk("ReduceL2", rL2),
		mk("ReduceLogSumExp", rLogSumExp), mk("ArgMax", rArgMax), mk("ArgMin", rArgMin),
	}
}

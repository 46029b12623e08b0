package cuda

import (
	"encoding/binary"
	"fmt"
	"slices"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Ops that produce values: Shape, Size and Constant write bytes fixed at Select (at most 128,
// passed as kernel parameters: a Run may not allocate or copy from host memory it does not own);
// ConstantOfShape fills; Range, CumSum and Trilu read their scalar inputs on the device.

const maxStoreBytes = 128

// storeSteps writes data (<= maxStoreBytes) to output 0.
func storeSteps(data []byte) ([]step, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if len(data) > maxStoreBytes {
		return nil, fmt.Errorf("a %d-byte value is more than the %d bytes the CUDA kernel writes from parameters; fold it into an initializer", len(data), maxStoreBytes)
	}
	var words [16]int64
	var buf [maxStoreBytes]byte
	copy(buf[:], data)
	for i := range words {
		words[i] = int64(binary.LittleEndian.Uint64(buf[i*8:]))
	}
	ps := []param{outp(0), i32p(len(data))}
	for _, w := range words {
		ps = append(ps, i64p(w))
	}
	return []step{{kernel: "carve_store_words", grid: Dim3{X: 1, Y: 1, Z: 1}, block: Dim3{X: 128, Y: 1, Z: 1}, params: ps}}, nil
}

func selectShape(n *kernels.Node, t kernels.Target) (plan, error) {
	dims, err := kernels.ShapeDims(n)
	if err != nil {
		return plan{}, err
	}
	steps, err := storeSteps(slices.Clone(kernels.BytesOf(dims)))
	return plan{tactic: "direct", prog: steps}, err
}

func selectSize(n *kernels.Node, t kernels.Target) (plan, error) {
	if err := kernels.CheckSize(n); err != nil {
		return plan{}, err
	}
	steps, err := storeSteps(kernels.BytesOf([]int64{numel(n.Inputs[0].Shape)}))
	return plan{tactic: "direct", prog: steps}, err
}

func selectConstant(n *kernels.Node, t kernels.Target) (plan, error) {
	data, err := kernels.ConstantValue(n)
	if err != nil {
		return plan{}, err
	}
	steps, err := storeSteps(slices.Clone(data))
	return plan{tactic: "direct", prog: steps}, err
}

// selectConstantOfShape fills the output with the value attribute's element (float32 0 when
// absent). The output's shape is the shape input's value, which the graph inferred.
func selectConstantOfShape(n *kernels.Node, t kernels.Target) (plan, error) {
	dt, elem, err := kernels.ConstantOfShapeValue(n)
	if err != nil {
		return plan{}, err
	}
	out := n.Outputs[0]
	es, err := elemSize(dt)
	if err != nil {
		return plan{}, err
	}
	var buf [8]byte
	copy(buf[:], elem)
	return plan{tactic: "direct", prog: fillSteps(outp(0), numel(out.Shape), es, int64(binary.LittleEndian.Uint64(buf[:])), t)}, nil
}

// selectRange writes start + i*delta; start and delta are read on the device, the count is the
// output's length (inferred by the graph from the values).
func selectRange(n *kernels.Node, t kernels.Target) (plan, error) {
	if err := kernels.CheckRangeOp(n); err != nil {
		return plan{}, err
	}
	dt := n.Inputs[0].DType
	switch dt {
	case graph.Float32, graph.Float64, graph.Float16, graph.BFloat16, graph.Int16, graph.Int32, graph.Int64:
	default:
		return plan{}, errDType("Range's type", dt, "float32, float64, float16, bfloat16, int16, int32 or int64")
	}
	o := n.Outputs[0]
	if o.Shape[0] == 0 {
		return plan{tactic: "direct"}, nil
	}
	st := step{kernel: "carve_range", grid: grid1(o.Shape[0], 1, t), block: block1,
		params: []param{outp(0), inp(0), inp(2), i64p(o.Shape[0]), i32p(int(dt))}}
	return plan{tactic: "direct", prog: program{st}}, nil
}

// selectCumSum scans along the axis read on the device; one thread per (outer, inner) column.
func selectCumSum(n *kernels.Node, t kernels.Target) (plan, error) {
	if err := kernels.CheckCumSum(n); err != nil {
		return plan{}, err
	}
	x, ax := n.Inputs[0], n.Inputs[1]
	if !isFloat(x.DType) && !isInt(x.DType) && x.DType != graph.Float64 {
		return plan{}, errDType("CumSum's type", x.DType, "float32, float16, bfloat16, float64, int64 or int32")
	}
	if len(x.Shape) > maxRank {
		return plan{}, fmt.Errorf("rank %d; the CUDA kernel takes rank <= %d", len(x.Shape), maxRank)
	}
	var d [maxRank]int64
	copy(d[:], x.Shape)
	if !fits32(d[:]...) {
		return plan{}, fmt.Errorf("dims of %v are too large for the CUDA kernel", x.Shape)
	}
	total := numel(x.Shape)
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	at := n.Attrs
	excl, rev := boolInt(at.Int("exclusive", 0) != 0), boolInt(at.Int("reverse", 0) != 0)
	if outer, dim, inner, ok := cumsumAxis(x.Shape, ax); ok && dim >= cumsumScanMin {
		cols := outer * inner
		st := step{kernel: "carve_cumsum_scan", grid: Dim3{X: uint32(min(cols, int64(max(t.SMs, 1))*gridWaves)), Y: 1, Z: 1},
			block: Dim3{X: cumsumScanThreads, Y: 1, Z: 1}, params: []param{
				outp(0), inp(0), i32p(int(x.DType)), i64p(outer), i64p(dim), i64p(inner), i32p(excl), i32p(rev),
			}}
		return plan{tactic: "direct", prog: program{st}}, nil
	}
	st := step{kernel: "carve_cumsum", grid: grid1(total, 1, t), block: block1, params: []param{
		outp(0), inp(0), inp(1), i32p(boolInt(ax.DType == graph.Int64)), i32p(int(x.DType)), i32p(len(x.Shape)),
		pack32(d[0], d[1]), pack32(d[2], d[3]), pack32(d[4], d[5]),
		i32p(excl), i32p(rev),
	}}
	return plan{tactic: "direct", prog: program{st}}, nil
}

// A column of at least cumsumScanMin elements is scanned by a block of cumsumScanThreads
// (carve_cumsum_scan) when the axis is known at Select; shorter ones, or an axis read on the
// device, take one thread per column (carve_cumsum).
const (
	cumsumScanMin     = 128
	cumsumScanThreads = 256
)

// cumsumAxis splits shape around the axis held in ax's bytes (Value.Const): the product of the
// dims before it, its length and the product of the dims after it. ok is false when the axis is
// not known at Select or is out of range (the kernel then reads it on the device, and does
// nothing for an axis out of range).
func cumsumAxis(shape []int64, ax kernels.Value) (outer, dim, inner int64, ok bool) {
	var a int64
	switch {
	case ax.DType == graph.Int64 && len(ax.Const) == 8:
		a = kernels.ViewAs[int64](ax.Const)[0]
	case ax.DType == graph.Int32 && len(ax.Const) == 4:
		a = int64(kernels.ViewAs[int32](ax.Const)[0])
	default:
		return 0, 0, 0, false
	}
	i, err := kernels.NormAxis(a, len(shape))
	if err != nil {
		return 0, 0, 0, false
	}
	return numel(shape[:i]), shape[i], numel(shape[i+1:]), true
}

// selectTrilu keeps one triangle of every matrix; k is read on the device.
func selectTrilu(n *kernels.Node, t kernels.Target) (plan, error) {
	if err := kernels.CheckTrilu(n); err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	k := nullp()
	if _, ok := n.Input(1); ok {
		k = inp(1)
	}
	es, err := elemSize(x.DType)
	if err != nil {
		return plan{}, err
	}
	total := numel(x.Shape)
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	r := len(x.Shape)
	st := step{kernel: fmt.Sprintf("carve_trilu_%d", es), grid: grid1(total, 1, t), block: block1, params: []param{
		outp(0), inp(0), k, i64p(total), i64p(x.Shape[r-2]), i64p(x.Shape[r-1]), i32p(boolInt(n.Attrs.Int("upper", 1) != 0)),
	}}
	return plan{tactic: "direct", prog: program{st}}, nil
}

func generateOps() []*op {
	mk := func(domain, name string, sel func(*kernels.Node, kernels.Target) (plan, error)) *op {
		return &op{key: kernels.Key(domain, name), tactics: direct, sel: sel}
	}
	ms := kernels.DomainMicrosoft
	return []*op{
		mk("", "Shape", selectShape), mk("", "Size", selectSize), mk("", "Constant", selectConstant),
		mk("", "ConstantOfShape", selectConstantOfShape), mk("", "Range", selectRange),
		mk("", "CumSum", selectCumSum), mk("", "Trilu", selectTrilu),
		mk(ms, "Trilu", selectTrilu), mk(ms, "Range", selectRange),
	}
}

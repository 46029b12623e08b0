package cpu

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/par"
)

// matMulNBits is com.microsoft.MatMulNBits: Y = A * dequant(B)^T (+ bias), B holding N rows of
// K weights quantized in blocks of block_size along K, bits (2, 4 or 8) per weight packed low
// bits first, with a scale per block and an optional zero point (packed like B, or a float per
// block; 2^(bits-1) when absent): w = (q - zero_point) * scale.
//
// Tactic "dequant-chunk": a chunk of weight rows is dequantized (in parallel) into workspace
// "weights" as float32 [rows, K], then multiplied with gonum Sgemm into the output columns of
// the chunk. The chunk holds at most nbitsChunkBytes of weights, so the workspace does not grow
// with N or with the activation's rows.
type matMulNBits struct {
	k, n, bits, bs, kBlocks, blob int
	chunk                         int // weight rows per chunk
	m                             int // rows of A
	zp                            int // 0 none, 1 packed uint8, 2 float
	bias                          bool
	slots                         int
}

const nbitsChunkBytes = 256 << 10

// nbitsParts is the recipe: one chunk of dequantized weight rows.
func nbitsParts(k, n int64) (rows int64, parts []alloc.Part, err error) {
	rows = min(max(nbitsChunkBytes/max(k*4, 1), 1), max(n, 1))
	sz, err := kernels.Product(rows, k, 4)
	if err != nil {
		return 0, nil, err
	}
	return rows, []alloc.Part{{Name: "weights", Size: sz}}, nil
}

func selectMatMulNBits(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := arity(n, 3, 6, 1, 1); err != nil {
		return plan{}, err
	}
	at := n.Attrs
	q := &matMulNBits{k: int(at.Int("K", 0)), n: int(at.Int("N", 0)), bits: int(at.Int("bits", 4)), bs: int(at.Int("block_size", 0)), slots: d.Workers}
	if q.k <= 0 || q.n <= 0 || (q.bits != 2 && q.bits != 4 && q.bits != 8) || q.bs < 16 || q.bs&(q.bs-1) != 0 {
		return plan{}, fmt.Errorf("K %d, N %d, bits %d, block_size %d: want positive K and N, bits 2, 4 or 8, block_size a power of two >= 16", q.k, q.n, q.bits, q.bs)
	}
	if at.Int("weight_prepacked", 0) != 0 {
		return plan{}, fmt.Errorf("prepacked weights are not supported")
	}
	q.kBlocks = (q.k + q.bs - 1) / q.bs
	q.blob = q.bs * q.bits / 8
	a, b, sc := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if a.DType != graph.Float32 || len(a.Shape) == 0 || a.Shape[len(a.Shape)-1] != int64(q.k) {
		return plan{}, fmt.Errorf("A is %v, want float32 [..., %d]", a, q.k)
	}
	if b.DType != graph.Uint8 || numel(b.Shape) != q.n*q.kBlocks*q.blob {
		return plan{}, fmt.Errorf("B is %v, want uint8 [%d, %d, %d]", b, q.n, q.kBlocks, q.blob)
	}
	if sc.DType != graph.Float32 || numel(sc.Shape) != q.n*q.kBlocks {
		return plan{}, fmt.Errorf("scales are %v, want float32 with %d elements", sc, q.n*q.kBlocks)
	}
	if zp, ok := n.Input(3); ok {
		switch {
		case zp.DType == graph.Uint8 && numel(zp.Shape) == q.n*((q.kBlocks*q.bits+7)/8):
			q.zp = 1
		case zp.DType == graph.Float32 && numel(zp.Shape) == q.n*q.kBlocks:
			q.zp = 2
		default:
			return plan{}, fmt.Errorf("zero_points %v fit neither the packed nor the per-block form", zp)
		}
	}
	if _, ok := n.Input(4); ok {
		return plan{}, fmt.Errorf("g_idx is not supported")
	}
	if bias, ok := n.Input(5); ok {
		if bias.DType != graph.Float32 || numel(bias.Shape) != q.n {
			return plan{}, fmt.Errorf("bias %v, want float32[%d]", bias, q.n)
		}
		q.bias = true
	}
	out := append(append([]int64(nil), a.Shape[:len(a.Shape)-1]...), int64(q.n))
	if err := checkOut(n, 0, graph.Float32, out); err != nil {
		return plan{}, err
	}
	q.m = numel(a.Shape[:len(a.Shape)-1])
	rows, parts, err := nbitsParts(int64(q.k), int64(q.n))
	if err != nil {
		return plan{}, err
	}
	q.chunk = int(rows)
	return plan{tactic: "dequant-chunk", parts: parts, r: q}, nil
}

func boundMatMulNBits(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	_, parts, err := nbitsParts(r.Attrs.Int("K", 0), r.Attrs.Int("N", 0))
	if err != nil {
		return kernels.Bound{}, err
	}
	return recipeBound("dequant-chunk", parts)
}

// dequantBody dequantizes weight rows [n0+lo, n0+hi) into w.
type dequantBody struct {
	q      *matMulNBits
	b, zp  []byte
	scales []float32
	zpf    []float32
	w      []float32
	n0     int
}

var dequantBodies = sync.Pool{New: func() any { return new(dequantBody) }}

func (db *dequantBody) Do(slot, lo, hi int) {
	q := db.q
	mask := byte(1<<q.bits - 1)
	zpRow := (q.kBlocks*q.bits + 7) / 8
	def := float32(int(1) << (q.bits - 1))
	for r := lo; r < hi; r++ {
		n := db.n0 + r
		row := db.w[r*q.k : (r+1)*q.k]
		for kb := 0; kb < q.kBlocks; kb++ {
			scale := db.scales[n*q.kBlocks+kb]
			zp := def
			switch q.zp {
			case 1:
				bit := kb * q.bits
				zp = float32((db.zp[n*zpRow+bit/8] >> (bit % 8)) & mask)
			case 2:
				zp = db.zpf[n*q.kBlocks+kb]
			}
			blob := db.b[(n*q.kBlocks+kb)*q.blob : (n*q.kBlocks+kb+1)*q.blob]
			k0 := kb * q.bs
			for i := 0; i < q.bs && k0+i < q.k; i++ {
				bit := i * q.bits
				v := (blob[bit/8] >> (bit % 8)) & mask
				row[k0+i] = (float32(v) - zp) * scale
			}
		}
	}
}

func (q *matMulNBits) run(in, out []kernels.Tensor, ws wsParts) error {
	w := kernels.ViewAs[float32](ws.bytes(0))
	a, y := in[0].Float32s(), out[0].Float32s()
	db := dequantBodies.Get().(*dequantBody)
	defer func() { *db = dequantBody{}; dequantBodies.Put(db) }()
	db.q, db.b, db.scales, db.w = q, in[1].Data, in[2].Float32s(), w
	switch q.zp {
	case 1:
		db.zp = in[3].Data
	case 2:
		db.zpf = in[3].Float32s()
	}
	for n0 := 0; n0 < q.n; n0 += q.chunk {
		cn := min(q.chunk, q.n-n0)
		db.n0 = n0
		par.For(cn, max(1, 64*1024/q.k), q.slots, db)
		if q.m > 0 {
			blasImpl.Sgemm(blas.NoTrans, blas.Trans, q.m, cn, q.k, 1, a, q.k, w, q.k, 0, y[n0:], q.n)
		}
	}
	if q.bias {
		bias := in[5].Float32s()[:q.n]
		for r := 0; r < q.m; r++ {
			row := y[r*q.n : (r+1)*q.n]
			for j, v := range bias {
				row[j] += v
			}
		}
	}
	return nil
}

func nbitsOps() []*op {
	return []*op{{
		key: kernels.Key(kernels.DomainMicrosoft, "MatMulNBits"), sel: selectMatMulNBits, bound: boundMatMulNBits,
		tactics: []kernels.TacticInfo{{Name: "dequant-chunk", Summary: "dequantize up to 256 KiB of weight rows into workspace, then Sgemm into their output columns", Workspace: true}},
	}}
}

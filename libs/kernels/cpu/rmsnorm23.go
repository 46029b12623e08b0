package cpu

import (
	"fmt"
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/par"
	"carve.dev/libs/kernels/internal/vec"
)

// onnxRMSNorm is ONNX's RMSNormalization (ai.onnx, opset 23): Y = X / sqrt(mean(X^2) + epsilon)
// * scale over the axes from axis on, scale broadcast to them. Each row's mean of squares is
// summed in float64; the row is then scaled in float32 as x * (1/rms), then by scale, the
// order in which exporters write RMSNorm out (x * rsqrt(...) * weight), and stored once in
// X's type.
//
// Tactic "direct": one pass per row, in parallel over rows; no workspace.
type onnxRMSNorm struct {
	dt      graph.DType
	bf      bool
	rows, h int
	eps     float64
	scaleIx []int32 // the scale element of each position of a row; nil when scale has h elements
	slots   int
}

func selectONNXRMSNorm(n *kernels.Node, d kernels.Target) (plan, error) {
	g, err := kernels.CheckNorm(n)
	if err != nil {
		return plan{}, err
	}
	x, scale := n.Inputs[0], n.Inputs[1]
	r := &onnxRMSNorm{dt: x.DType, bf: x.DType == graph.BFloat16, eps: float64(g.Eps), rows: int(g.Rows), h: int(g.H), slots: d.Workers}
	if r.scaleIx, err = bcastIndex(scale.Shape, x.Shape[g.Axis:]); err != nil {
		return plan{}, fmt.Errorf("scale: %w", err)
	}
	return plan{tactic: "direct", r: r}, nil
}

type rmsRun struct {
	r       *onnxRMSNorm
	x, s, y []byte
}

var rmsRuns par.Pool[rmsRun]

func (r *onnxRMSNorm) run(in, out []kernels.Tensor, _ wsParts) error {
	b := rmsRuns.Get()
	*b = rmsRun{r: r, x: in[0].Data, s: in[1].Data, y: out[0].Data}
	grain, slots := loopShape(r.rows, r.h, weightRow, r.slots)
	par.For(r.rows, grain, slots, b)
	*b = rmsRun{}
	rmsRuns.Put(b)
	return nil
}

func (b *rmsRun) Do(_, lo, hi int) {
	if b.r.dt == graph.Float32 {
		rmsRowsF32(b, lo, hi)
	} else {
		rmsRows[uint16](b, lo, hi)
	}
}

// rmsRowsF32 is rmsRows for float32, vectorized (package vec).
func rmsRowsF32(b *rmsRun, lo, hi int) {
	r := b.r
	x, s, y := kernels.ViewAs[float32](b.x), kernels.ViewAs[float32](b.s), kernels.ViewAs[float32](b.y)
	for row := lo; row < hi; row++ {
		xr, yr := x[row*r.h:(row+1)*r.h], y[row*r.h:(row+1)*r.h]
		_, ss := vec.Sums(xr)
		inv := float32(1 / math.Sqrt(ss/float64(r.h)+r.eps))
		if r.scaleIx == nil {
			vec.Affine(yr, xr, s, nil, 0, inv)
			continue
		}
		for j, v := range xr {
			yr[j] = v * inv * s[r.scaleIx[j]]
		}
	}
}

func rmsRows[E elt](b *rmsRun, lo, hi int) {
	r, bf := b.r, b.r.bf
	x, s, y := kernels.ViewAs[E](b.x), kernels.ViewAs[E](b.s), kernels.ViewAs[E](b.y)
	for row := lo; row < hi; row++ {
		xr, yr := x[row*r.h:(row+1)*r.h], y[row*r.h:(row+1)*r.h]
		var ss float64
		for _, v := range xr {
			f := float64(ld(v, bf))
			ss += f * f
		}
		inv := float32(1 / math.Sqrt(ss/float64(r.h)+r.eps))
		for j, v := range xr {
			k := j
			if r.scaleIx != nil {
				k = int(r.scaleIx[j])
			}
			yr[j] = st[E](ld(v, bf)*inv*ld(s[k], bf), bf)
		}
	}
}

func onnxRMSNormOps() []*op {
	return []*op{{key: kernels.Key("", "RMSNormalization"), sel: selectONNXRMSNorm,
		tactics: []kernels.TacticInfo{{Name: "direct", Summary: "per row: sum of squares in float64, then scale; parallel over rows, no workspace"}}}}
}

package cpu

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/gemm"
)

// ConvTranspose (1-D to 3-D; group, strides, dilations, pads, output_padding, output_shape,
// auto_pad; optional bias) on float32, with the checks of kernels.CheckConvTranspose. One
// tactic, "col2im": per batch image and group, col (M/group * kernel volume x a tile of the
// input's positions) = W_g^T X_g on the packed gemm (X read in place), then each column's
// kernel taps are added into Y at their output positions, Y set to the bias (or zero) first.
// The tiles run one after another, each product parallel over the workers, so that no two
// participants add into one output element. Workspace: "col", one tile of at most
// convTileCols(K) columns, and "gemm", the product's; both grow with every dim.
type convTranspose struct {
	geo        geom3
	n, groups  int
	cg, mg, kk int // input and output channels per group, mg * kernel volume
	inVol, p   int // the input's and the output's spatial volume
	pt, tiles  int
	full, last gemm.Plan
	bias       bool
}

func convTransposeOps() []*op {
	return []*op{{key: kernels.Key("", "ConvTranspose"), sel: selectConvTranspose, bound: boundConvTranspose, tactics: []kernels.TacticInfo{
		{Name: "col2im", Summary: "W^T X by tiles of the input's positions on the packed gemm into workspace, each tile's taps added into the output, bias first", Workspace: true},
	}}}
}

// convTransposeParts is the col2im recipe for a product of kk rows, cg inner and pin columns,
// tiled at the width kLo's tiles have.
func convTransposeParts(kk, cg, pin, kLo int64, workers int) (parts []alloc.Part, pt int64) {
	if kk == 0 || pin == 0 {
		return nil, 0
	}
	pt = min(pin, convTileCols(kLo))
	g := gemm.Workspace(kk, pt, cg, gemm.RowMajor, workers)
	return []alloc.Part{{Name: "col", Size: kk * pt * 4}, {Name: "gemm", Size: max(g*4, 4)}}, pt
}

func selectConvTranspose(n *kernels.Node, d kernels.Target) (plan, error) {
	g, err := kernels.CheckConvTranspose(n)
	if err != nil {
		return plan{}, err
	}
	if dt := n.Inputs[0].DType; dt != graph.Float32 {
		return plan{}, fmt.Errorf("input is %v: the CPU ConvTranspose computes float32 only; cast the model to float32", dt)
	}
	ct := &convTranspose{geo: newGeom3(g), n: int(g.N), groups: int(g.Group), bias: g.Bias}
	ct.cg, ct.mg = int(g.C/g.Group), int(g.M/g.Group)
	ct.kk = ct.mg * ct.geo.kvol()
	ct.inVol = ct.geo.in[0] * ct.geo.in[1] * ct.geo.in[2]
	ct.p = ct.geo.out[0] * ct.geo.out[1] * ct.geo.out[2]
	parts, pt := convTransposeParts(int64(ct.kk), int64(ct.cg), int64(ct.inVol), int64(ct.kk), d.Workers)
	ct.pt = int(pt)
	if ct.pt > 0 {
		ct.tiles = (ct.inVol + ct.pt - 1) / ct.pt
		ct.full = gemm.NewPlan(ct.kk, ct.pt, ct.cg, gemm.RowMajor, d.Workers)
		ct.last = gemm.NewPlan(ct.kk, ct.inVol-(ct.tiles-1)*ct.pt, ct.cg, gemm.RowMajor, d.Workers)
	}
	return plan{tactic: "col2im", parts: parts, r: ct}, nil
}

// boundConvTranspose is W: the recipe at the range's largest dims, tiles as wide as at the
// smallest weight.
func boundConvTranspose(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	x, okX := r.Input(0)
	w, okW := r.Input(1)
	if !okX || !okW || len(x.Dims) < 3 || len(w.Dims) != len(x.Dims) {
		return kernels.Bound{}, fmt.Errorf("ConvTranspose needs X and W of one rank, 3 or more")
	}
	if x.DType != graph.Float32 {
		return kernels.Bound{}, nil // refused at Select
	}
	groups := max(r.Attrs.Int("group", 1), 1)
	kHi, kLo, pin := w.Dims[1].Hi, w.Dims[1].Lo, int64(1)
	for _, dr := range w.Dims[2:] {
		kHi, kLo = kHi*dr.Hi, kLo*dr.Lo
	}
	for _, dr := range x.Dims[2:] {
		var err error
		if pin, err = kernels.Product(pin, dr.Hi); err != nil {
			return kernels.Bound{}, err
		}
	}
	parts, _ := convTransposeParts(kHi, x.Dims[1].Hi/groups, pin, kLo, d.Workers)
	return recipeBound("col2im", parts)
}

func (ct *convTranspose) run(in, out []kernels.Tensor, ws wsParts) error {
	x, w, y := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
	y = y[:ct.n*ct.groups*ct.mg*ct.p]
	if ct.bias {
		b := in[2].Float32s()
		for i := range ct.n * ct.groups * ct.mg {
			v := b[i%(ct.groups*ct.mg)]
			row := y[i*ct.p : (i+1)*ct.p]
			for j := range row {
				row[j] = v
			}
		}
	} else {
		clear(y)
	}
	if ct.pt == 0 {
		return nil
	}
	col, gws := kernels.ViewAs[float32](ws.bytes(0)), kernels.ViewAs[float32](ws.bytes(1))
	for img := range ct.n {
		for grp := range ct.groups {
			xg := x[(img*ct.groups+grp)*ct.cg*ct.inVol:]
			wg := w[grp*ct.cg*ct.kk:]
			yg := y[(img*ct.groups+grp)*ct.mg*ct.p:][:ct.mg*ct.p]
			for t := range ct.tiles {
				pl := ct.full
				if t == ct.tiles-1 {
					pl = ct.last
				}
				p0 := t * ct.pt
				pl.Run(gemm.Mat{Data: wg, Ld: ct.kk, Trans: true}, gemm.Mat{Data: xg[p0:], Ld: ct.inVol}, nil, col, pl.N, 1, false, gws)
				ct.col2im(col, yg, p0, pl.N)
			}
		}
	}
	return nil
}

// col2im adds the col tile (rows (m, kz, ky, kx), columns the input positions [p0, p0+cols))
// into the image-group's output: column (iz, iy, ix) of row (m, k) goes to output position
// i*s - pad + k*d of channel m where that lies inside the output.
func (ct *convTranspose) col2im(col, yg []float32, p0, cols int) {
	g := &ct.geo
	kv := g.kvol()
	for r := range ct.kk {
		m, kr := r/kv, r%kv
		kz, ky, kx := kr/(g.k[1]*g.k[2]), kr/g.k[2]%g.k[1], kr%g.k[2]
		src := col[r*cols : (r+1)*cols]
		ym := yg[m*ct.p : (m+1)*ct.p]
		ix := p0 % g.in[2]
		iy := p0 / g.in[2] % g.in[1]
		iz := p0 / g.in[2] / g.in[1]
		for j := 0; j < cols; {
			run := min(cols-j, g.in[2]-ix)
			oz := iz*g.s[0] - g.p[0] + kz*g.d[0]
			oy := iy*g.s[1] - g.p[1] + ky*g.d[1]
			if oz >= 0 && oz < g.out[0] && oy >= 0 && oy < g.out[1] {
				row := ym[(oz*g.out[1]+oy)*g.out[2]:][:g.out[2]]
				ox := ix*g.s[2] - g.p[2] + kx*g.d[2]
				for _, v := range src[j : j+run] {
					if uint(ox) < uint(len(row)) {
						row[ox] += v
					}
					ox += g.s[2]
				}
			}
			j += run
			ix += run
			if ix == g.in[2] {
				ix = 0
				if iy++; iy == g.in[1] {
					iy = 0
					iz++
				}
			}
		}
	}
}

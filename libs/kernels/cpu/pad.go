package cpu

import (
	bin "encoding/binary"
	"fmt"
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Pad (opset 2 to 21): modes constant, reflect, edge and wrap over any dtype, the pads (and the
// opset-18 axes) read from their inputs at run time (from the attribute before opset 11) and
// checked against the output's shape, negative pads cropping, constant_value from input 2 (the
// value attribute before opset 11; zero when absent). One tactic, "direct": output rows (every
// dim but the last) one after another, the input's part of a row copied whole, no workspace.
type pad struct {
	mode     string
	rank     int
	es       int     // element size in bytes
	in, out  []int64 // shapes
	attrPads []int64 // the pads attribute (opset < 11), nil otherwise
	attrVal  float32
	dt       graph.DType
}

// maxPadRank bounds Pad's rank, so that the run keeps its pads on the stack.
const maxPadRank = 8

func padOps() []*op {
	return []*op{{key: kernels.Key("", "Pad"), tactics: direct, sel: selectPad}}
}

func selectPad(n *kernels.Node, d kernels.Target) (plan, error) {
	pd, err := kernels.CheckPad(n)
	if err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	if len(x.Shape) > maxPadRank {
		return plan{}, fmt.Errorf("rank %d: at most %d is supported", len(x.Shape), maxPadRank)
	}
	if x.DType.Size() < 1 {
		return plan{}, fmt.Errorf("input is %v: want a dtype of whole bytes", x.DType)
	}
	p := &pad{mode: pd.Mode, rank: len(x.Shape), es: int(x.DType.Size()), in: x.Shape, out: n.Outputs[0].Shape,
		attrPads: pd.AttrPads, attrVal: n.Attrs.Float("value", 0), dt: x.DType}
	return plan{tactic: "direct", r: p}, nil
}

// readInts reads an int64 or int32 tensor's element i.
func readInts(t kernels.Tensor, i int) int64 {
	if t.DType == graph.Int32 {
		return int64(int32(bin.LittleEndian.Uint32(t.Data[4*i:])))
	}
	return int64(bin.LittleEndian.Uint64(t.Data[8*i:]))
}

var errPadShape = fmt.Errorf("pads do not give the output's shape")

func (p *pad) run(in, out []kernels.Tensor, _ wsParts) error {
	r := p.rank
	var pads [2 * maxPadRank]int64
	switch {
	case p.attrPads != nil:
		copy(pads[:], p.attrPads)
	case len(in) > 3 && in[3].Data != nil: // axes
		na := numel(in[3].Shape)
		for i := range na {
			a := readInts(in[3], i)
			if a < 0 {
				a += int64(r)
			}
			if a < 0 || a >= int64(r) {
				return errPadShape
			}
			pads[a], pads[int64(r)+a] = readInts(in[1], i), readInts(in[1], na+i)
		}
	default:
		for i := range 2 * r {
			pads[i] = readInts(in[1], i)
		}
	}
	for i := range r {
		if p.in[i]+pads[i]+pads[r+i] != p.out[i] {
			return errPadShape
		}
	}
	// the constant, as bytes of the output's dtype
	var cv [8]byte
	if len(in) > 2 && in[2].Data != nil && len(in[2].Data) >= p.es {
		copy(cv[:], in[2].Data[:p.es])
	} else if p.attrVal != 0 {
		switch p.dt {
		case graph.Float32:
			bin.LittleEndian.PutUint32(cv[:], math.Float32bits(p.attrVal))
		case graph.Float64:
			bin.LittleEndian.PutUint64(cv[:], math.Float64bits(float64(p.attrVal)))
		case graph.Float16:
			bin.LittleEndian.PutUint16(cv[:], tof16(p.attrVal))
		case graph.BFloat16:
			bin.LittleEndian.PutUint16(cv[:], tobf16(p.attrVal))
		}
	}
	x, y := in[0].Data, out[0].Data
	es := p.es
	last := r - 1
	if r == 0 {
		copy(y[:es], x[:es])
		return nil
	}
	rowLen, inRow := int(p.out[last]), int(p.in[last])
	rows := numel(p.out[:last])
	var idx [maxPadRank]int64 // the output row's coordinates
	for row := range rows {
		yr := y[row*rowLen*es : (row+1)*rowLen*es]
		// the input row it reads, or none (a constant row)
		src, ok := 0, true
		for d := 0; d < last; d++ {
			i, in := padIndex(idx[d]-pads[d], p.in[d], p.mode)
			ok = ok && in
			src = src*int(p.in[d]) + int(i)
		}
		if !ok || inRow == 0 && p.mode == "constant" {
			fillBytes(yr, cv[:es])
		} else {
			xr := x[src*inRow*es : (src+1)*inRow*es]
			lo := int(max(0, min(int64(rowLen), pads[last])))
			hi := int(max(int64(lo), min(int64(rowLen), pads[last]+int64(inRow))))
			copy(yr[lo*es:hi*es], xr[(lo-int(pads[last]))*es:])
			for j := 0; j < rowLen; j++ {
				if j == lo && hi > lo {
					j = hi - 1
					continue
				}
				i, in := padIndex(int64(j)-pads[last], int64(inRow), p.mode)
				if in {
					copy(yr[j*es:(j+1)*es], xr[int(i)*es:])
				} else {
					copy(yr[j*es:(j+1)*es], cv[:es])
				}
			}
		}
		for d := last - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < p.out[d] {
				break
			}
			idx[d] = 0
		}
	}
	return nil
}

// padIndex maps coordinate i of a padded dim of size n to the input's: ok is false for
// constant padding.
func padIndex(i, n int64, mode string) (int64, bool) {
	if i >= 0 && i < n {
		return i, true
	}
	if n == 0 {
		return 0, false
	}
	switch mode {
	case "edge":
		return min(max(i, 0), n-1), true
	case "wrap":
		return (i%n + n) % n, true
	case "reflect":
		if n == 1 {
			return 0, true
		}
		period := 2 * (n - 1)
		i = (i%period + period) % period
		if i >= n {
			i = period - i
		}
		return i, true
	}
	return 0, false
}

// fillBytes fills b with copies of v.
func fillBytes(b, v []byte) {
	if len(b) == 0 {
		return
	}
	copy(b, v)
	for n := len(v); n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

package cpu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// packBits packs values of the given bit width into bytes, low bits first.
func packBits(vals []int, bits int) []byte {
	out := make([]byte, (len(vals)*bits+7)/8)
	for i, v := range vals {
		bit := i * bits
		out[bit/8] |= byte(v << (bit % 8))
	}
	return out
}

func TestMatMulNBits(t *testing.T) {
	r := rng(t, 14)
	for _, tc := range []struct {
		m, k, n, bits, bs int
		zp                string // "", "packed", "float"
		bias              bool
	}{
		{3, 64, 5, 4, 32, "", false},
		{2, 70, 3, 4, 16, "packed", true}, // K not a multiple of the block
		{4, 32, 6, 8, 32, "packed", false},
		{1, 48, 4, 2, 16, "float", true},
		{5, 128, 9, 4, 64, "float", false},
		{2, 1024, 300, 4, 32, "packed", false}, // several chunks of weight rows
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			kb := (tc.k + tc.bs - 1) / tc.bs
			q := make([]int, tc.n*kb*tc.bs)
			for i := range q {
				q[i] = r.IntN(1 << tc.bits)
			}
			var blob []byte
			for row := 0; row < tc.n; row++ {
				for b := 0; b < kb; b++ {
					blob = append(blob, packBits(q[(row*kb+b)*tc.bs:(row*kb+b+1)*tc.bs], tc.bits)...)
				}
			}
			scales := make([]float32, tc.n*kb)
			for i := range scales {
				scales[i] = float32(r.Float64()*0.2 + 0.01)
			}
			zps := make([]float64, tc.n*kb)
			for i := range zps {
				zps[i] = float64(int(1) << (tc.bits - 1))
			}
			a := randF32(r, int64(tc.m), int64(tc.k))
			in := []kernels.Tensor{a, {DType: graph.Uint8, Shape: []int64{int64(tc.n), int64(kb), int64(tc.bs * tc.bits / 8)}, Data: blob}, f32([]int64{int64(tc.n), int64(kb)}, scales)}
			switch tc.zp {
			case "packed":
				per := (kb*tc.bits + 7) / 8
				var zb []byte
				for row := 0; row < tc.n; row++ {
					vals := make([]int, kb)
					for b := range vals {
						vals[b] = r.IntN(1 << tc.bits)
						zps[row*kb+b] = float64(vals[b])
					}
					p := packBits(vals, tc.bits)
					zb = append(zb, append(p, make([]byte, per-len(p))...)...)
				}
				in = append(in, kernels.Tensor{DType: graph.Uint8, Shape: []int64{int64(tc.n * per)}, Data: zb})
			case "float":
				zf := make([]float32, tc.n*kb)
				for i := range zf {
					zf[i] = float32(r.Float64() * 8)
					zps[i] = float64(zf[i])
				}
				in = append(in, f32([]int64{int64(tc.n), int64(kb)}, zf))
			default:
				in = append(in, kernels.Tensor{})
			}
			var bias kernels.Tensor
			if tc.bias {
				bias = randF32(r, int64(tc.n))
				in = append(in, kernels.Tensor{}, bias)
			}
			for in[len(in)-1].DType == graph.Undefined {
				in = in[:len(in)-1]
			}
			n := msNode("MatMulNBits", kernels.Attrs("K", tc.k, "N", tc.n, "bits", tc.bits, "block_size", tc.bs), in,
				kernels.Value{DType: graph.Float32, Shape: []int64{int64(tc.m), int64(tc.n)}})
			got, inst := run(t, n, in...)
			require.Equal(t, "dequant-pack", inst.Tactic())
			want := make([]float32, tc.m*tc.n)
			for i := 0; i < tc.m; i++ {
				for j := 0; j < tc.n; j++ {
					var s float64
					for l := 0; l < tc.k; l++ {
						b := l / tc.bs
						w := (float64(q[(j*kb+b)*tc.bs+l%tc.bs]) - zps[j*kb+b]) * float64(scales[j*kb+b])
						s += float64(a.Float32s()[i*tc.k+l]) * w
					}
					if tc.bias {
						s += float64(bias.Float32s()[j])
					}
					want[i*tc.n+j] = float32(s)
				}
			}
			closeTo(t, want, got[0].Float32s(), 1e-4)
			requireRefusesSmallWorkspace(t, n, in...)
		})
	}
}

package cpu

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// benchRun selects n, carves its workspace once and runs it b.N times.
func benchRun(b *testing.B, n *kernels.Node, in []kernels.Tensor, flops float64) {
	benchRunOn(b, n, in, flops, 0)
}

// benchRunOn is benchRun with workers workers (0: GOMAXPROCS).
func benchRunOn(b *testing.B, n *kernels.Node, in []kernels.Tensor, flops float64, workers int) {
	inst, err := registry.Select(n, kernels.CPU(workers))
	if err != nil {
		b.Fatal(err)
	}
	out := make([]kernels.Tensor, len(n.Outputs))
	for i, v := range n.Outputs {
		if v.Present() {
			out[i] = kernels.MustTensor(v.DType, v.Shape...)
		}
	}
	size, _ := inst.Recipe().Size()
	reg, keep := region(size)
	var ws *alloc.Workspace
	if size > 0 {
		if ws, err = alloc.Carve(reg, inst.Recipe()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := inst.Run(in, out, ws, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if flops > 0 {
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
	_ = keep
	b.Logf("tactic %s", inst.Tactic())
}

func BenchmarkMatMul(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range [][3]int64{{1, 768, 768}, {64, 768, 768}, {256, 1024, 1024}, {8, 4096, 64}, {1, 4096, 128}, {512, 64, 512}} {
		m, k, nn := s[0], s[1], s[2]
		b.Run(fmt.Sprintf("%dx%dx%d", m, k, nn), func(b *testing.B) {
			a, w := randF32(r, m, k), randF32(r, k, nn)
			n := node("MatMul", graph.Attributes{}, []kernels.Tensor{a, w}, kernels.Value{DType: graph.Float32, Shape: []int64{m, nn}})
			benchRun(b, n, []kernels.Tensor{a, w}, float64(2*m*k*nn))
		})
	}
}

func BenchmarkAttention(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const heads, d = 12, 64
	for _, s := range [][3]int64{{1, 128, 128}, {1, 1, 1024}, {4, 1, 2048}, {1, 512, 512}} {
		bs, sq, sk := s[0], s[1], s[2]
		b.Run(fmt.Sprintf("b%d-q%d-k%d", bs, sq, sk), func(b *testing.B) {
			q := randF32(r, bs, sq, heads*d)
			k, v := randF32(r, bs, sk, heads*d), randF32(r, bs, sk, heads*d)
			n := msNode("MultiHeadAttention", kernels.Attrs("num_heads", heads), []kernels.Tensor{q, k, v}, value(q))
			benchRun(b, n, []kernels.Tensor{q, k, v}, float64(4*bs*heads*sq*sk*d))
		})
	}
}

func BenchmarkLayerNorm(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	x, g := randF32(r, 64, 768), randF32(r, 768)
	n := node("LayerNormalization", graph.Attributes{}, []kernels.Tensor{x, g, g}, value(x))
	benchRun(b, n, []kernels.Tensor{x, g, g}, 0)
}

func BenchmarkMatMulNBits(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	const k, nn, bs = 1024, 1024, 32
	blob := make([]byte, nn*(k/bs)*bs/2)
	for i := range blob {
		blob[i] = byte(r.IntN(256))
	}
	for _, m := range []int64{1, 32} {
		b.Run(fmt.Sprintf("m%d", m), func(b *testing.B) {
			a := randF32(r, m, k)
			sc := randF32(r, nn, k/bs)
			in := []kernels.Tensor{a, {DType: graph.Uint8, Shape: []int64{nn, k / bs, bs / 2}, Data: blob}, sc}
			n := msNode("MatMulNBits", kernels.Attrs("K", k, "N", nn, "bits", 4, "block_size", bs), in, kernels.Value{DType: graph.Float32, Shape: []int64{m, nn}})
			benchRun(b, n, in, float64(2*m*k*nn))
		})
	}
}

// BenchmarkSwiGLU: the MLP gate of a Qwen2.5-1.5B decode step (8960 elements): SwiGLU in one
// pass against Swish then Mul, as before the fusion.
func BenchmarkSwiGLU(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []graph.DType{graph.Float32, graph.BFloat16} {
		a := tensorOf(dt, []int64{1, 8960}, float64sOf(randF32(r, 1, 8960)))
		u := tensorOf(dt, []int64{1, 8960}, float64sOf(randF32(r, 1, 8960)))
		y := value(a)
		b.Run("SwiGLU/"+dt.String(), func(b *testing.B) {
			n := node("SwiGLU", graph.Attributes{}, []kernels.Tensor{a, u}, y)
			n.Domain = kernels.DomainCarve
			benchRun(b, n, []kernels.Tensor{a, u}, 0)
		})
		b.Run("Swish/"+dt.String(), func(b *testing.B) {
			benchRun(b, node("Swish", graph.Attributes{}, []kernels.Tensor{a}, y), []kernels.Tensor{a}, 0)
		})
		b.Run("Mul/"+dt.String(), func(b *testing.B) {
			benchRun(b, node("Mul", graph.Attributes{}, []kernels.Tensor{a, u}, y), []kernels.Tensor{a, u}, 0)
		})
	}
}

// BenchmarkRotary: com.microsoft.RotaryEmbedding over [8, 128, 64] in 4 heads (the
// contrib_rotary fixture at (8, 128)) and over a Qwen2.5-1.5B prompt's queries, [1, 128,
// 12*128], on 1 to 16 workers.
func BenchmarkRotary(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct{ b, s, heads, d int64 }{{8, 128, 4, 16}, {1, 128, 12, 128}} {
		x := randF32(r, s.b, s.s, s.heads*s.d)
		pos := make([]int64, s.b*s.s)
		for i := range pos {
			pos[i] = int64(i) % s.s
		}
		cs, sn := randF32(r, s.s, s.d/2), randF32(r, s.s, s.d/2)
		in := []kernels.Tensor{x, i64([]int64{s.b, s.s}, pos), cs, sn}
		n := msNode("RotaryEmbedding", kernels.Attrs("num_heads", s.heads), in, value(x))
		for _, w := range benchWorkers() {
			b.Run(fmt.Sprintf("%dx%dx%dx%d/w%d", s.b, s.s, s.heads, s.d, w), func(b *testing.B) {
				benchRunOn(b, n, in, 0, w)
			})
		}
	}
}

// BenchmarkContribAttention: com.microsoft.Attention with packed QKV weights, a bias and a
// [B, T] mask of ones, as the contrib_attention fixture at (8, 128): hidden 64 in 4 heads.
func BenchmarkContribAttention(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const bs, s, hidden, heads = 8, 128, 64, 4
	x, w, bias := randF32(r, bs, s, hidden), randF32(r, hidden, 3*hidden), randF32(r, 3*hidden)
	mask := make([]int32, bs*s)
	for i := range mask {
		mask[i] = 1
	}
	in := []kernels.Tensor{x, w, bias, i32([]int64{bs, s}, mask)}
	n := msNode("Attention", kernels.Attrs("num_heads", heads), in, value(x))
	flops := float64(2*bs*s*hidden*3*hidden + 4*bs*heads*s*s*(hidden/heads))
	for _, wk := range benchWorkers() {
		b.Run(fmt.Sprintf("w%d", wk), func(b *testing.B) { benchRunOn(b, n, in, flops, wk) })
	}
	// Its QKV projection alone: [1024, 64] x [64, 192].
	w2 := f32([]int64{hidden, 3 * hidden}, w.Float32s())
	x2 := f32([]int64{bs * s, hidden}, x.Float32s())
	mm := node("MatMul", graph.Attributes{}, []kernels.Tensor{x2, w2}, kernels.Value{DType: graph.Float32, Shape: []int64{bs * s, 3 * hidden}})
	for _, wk := range benchWorkers() {
		b.Run(fmt.Sprintf("projection/w%d", wk), func(b *testing.B) {
			benchRunOn(b, mm, []kernels.Tensor{x2, w2}, float64(2*bs*s*hidden*3*hidden), wk)
		})
	}
}

// benchWorkers is 1, 2, 4, 8 and 16 workers, up to GOMAXPROCS.
func benchWorkers() []int {
	var ws []int
	for w := 1; w <= min(16, runtime.GOMAXPROCS(0)); w *= 2 {
		ws = append(ws, w)
	}
	return ws
}

package cpu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The fused Attention run gives the two-loop run's outputs bit for bit, on one worker and on
// several, with and without the bias, masks, a causal mask, a past and the present output; and
// it is the run picked for the shapes it is meant for.
func TestAttentionFusedMatchesTwoLoop(t *testing.T) {
	r := rng(t, 17)
	for _, tc := range []struct {
		b, s, p, hin, heads, hq, hv int
		bias, causal, present       bool
		mask                        string
		workers                     int
		fused                       bool // the run is fused at this worker count
		group                       int  // with this many heads a task
	}{
		{b: 8, s: 128, hin: 64, heads: 4, hq: 64, hv: 64, bias: true, mask: "raw2", workers: 4, fused: true, group: 2},
		{b: 8, s: 128, hin: 64, heads: 4, hq: 64, hv: 64, bias: true, mask: "raw2", workers: 1, fused: true, group: 2},
		{b: 8, s: 128, hin: 64, heads: 4, hq: 64, hv: 64, bias: true, mask: "raw2", workers: 16, fused: true, group: 2},
		{b: 8, s: 128, hin: 64, heads: 4, hq: 64, hv: 64, bias: true, mask: "raw2", workers: 12, fused: true, group: 1}, // 16 tasks would take 2 rounds
		{b: 3, s: 33, hin: 64, heads: 4, hq: 64, hv: 64, bias: true, mask: "raw2", workers: 16, fused: false},           // the scratch slot cannot hold the projection's workspace
		{b: 1, s: 128, hin: 192, heads: 12, hq: 192, hv: 192, bias: true, workers: 16, fused: false},                    // 12 tasks on 16
		{b: 1, s: 64, hin: 96, heads: 12, hq: 96, hv: 96, bias: true, workers: 16, fused: true, group: 1},               // the two loops' attention has 12 tasks too
		{b: 2, s: 50, hin: 40, heads: 8, hq: 64, hv: 64, bias: true, causal: true, workers: 2, fused: true, group: 4},
		{b: 2, s: 20, hin: 40, heads: 2, hq: 64, hv: 64, workers: 2, fused: true, group: 1},
		{b: 4, s: 70, hin: 24, heads: 3, hq: 24, hv: 30, mask: "lengths", causal: true, workers: 4, fused: true, group: 1},
		{b: 2, s: 40, p: 9, hin: 32, heads: 4, hq: 32, hv: 32, bias: true, mask: "raw3", causal: true, present: true, workers: 2, fused: true, group: 4},
		{b: 2, s: 40, p: 9, hin: 32, heads: 4, hq: 32, hv: 32, bias: true, mask: "raw3", causal: true, present: true, workers: 3, fused: true, group: 1}, // 2 tasks of 4 heads would leave 1 of 3 idle,
		{b: 3, s: 33, hin: 48, heads: 2, hq: 48, hv: 48, bias: true, mask: "startend", workers: 2, fused: true, group: 1},
		{b: 1, s: 128, hin: 64, heads: 2, hq: 64, hv: 64, bias: true, workers: 4, fused: false}, // 2 tasks on 4 workers
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			T := tc.p + tc.s
			x := randF32(r, int64(tc.b), int64(tc.s), int64(tc.hin))
			tot := 2*tc.hq + tc.hv
			w := randF32(r, int64(tc.hin), int64(tot))
			in := []kernels.Tensor{x, w, {}, {}, {}}
			if tc.bias {
				in[2] = randF32(r, int64(tot))
			}
			switch tc.mask {
			case "raw2":
				m := make([]int32, tc.b*T)
				for i := range m {
					m[i] = int32(min(r.IntN(8), 1)) // mostly ones
				}
				in[3] = i32([]int64{int64(tc.b), int64(T)}, m)
			case "raw3":
				m := make([]int32, tc.b*tc.s*T)
				for i := range m {
					m[i] = int32(r.IntN(2))
				}
				in[3] = i32([]int64{int64(tc.b), int64(tc.s), int64(T)}, m)
			case "lengths":
				m := make([]int32, tc.b)
				for i := range m {
					m[i] = int32(1 + r.IntN(T))
				}
				in[3] = i32([]int64{int64(tc.b)}, m)
			case "startend":
				m := make([]int32, 2*tc.b)
				for i := range tc.b {
					m[i], m[tc.b+i] = int32(T-i), int32(i)
				}
				in[3] = i32([]int64{2 * int64(tc.b)}, m)
			}
			d := tc.hq / tc.heads
			outs := []kernels.Value{{DType: graph.Float32, Shape: []int64{int64(tc.b), int64(tc.s), int64(tc.hv)}}}
			if tc.p > 0 {
				in[4] = randF32(r, 2, int64(tc.b), int64(tc.heads), int64(tc.p), int64(d))
			}
			if tc.present {
				outs = append(outs, kernels.Value{DType: graph.Float32, Shape: []int64{2, int64(tc.b), int64(tc.heads), int64(T), int64(d)}})
			}
			for in[len(in)-1].DType == graph.Undefined {
				in = in[:len(in)-1]
			}
			causal := 0
			if tc.causal {
				causal = 1
			}
			attrs := kernels.Attrs("num_heads", tc.heads, "unidirectional", causal, "qkv_hidden_sizes", []int64{int64(tc.hq), int64(tc.hq), int64(tc.hv)})
			n := msNode("Attention", attrs, in, outs...)
			inst, err := registry.Select(n, kernels.Target{Backend: kernels.BackendCPU, Workers: tc.workers})
			require.NoError(t, err)
			a := inst.(*instance).impl.(*attention)
			require.Equal(t, tc.fused, a.fused, "fused")
			if tc.fused {
				require.Equal(t, tc.group, a.fusedHeads, "heads a task")
			}
			got := runOn(t, tc.workers, n, in...)
			fuseOff = true
			want := runOn(t, tc.workers, n, in...)
			fuseOff = false
			for i := range want {
				require.Equal(t, want[i].Data, got[i].Data, "output %d", i)
			}
		})
	}
}

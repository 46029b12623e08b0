//go:build cuda

package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// com.microsoft.MoE is graph-capturable: a run captured once and replayed gives the eager run's
// output bit for bit, and replayed again after new router logits (and a new input) are copied
// into the same buffers, gives the CPU kernel's output for those: the routing, the sort and the
// products' tiles are decided on the device at every replay. The workspace starts as NaN bits,
// so that nothing relies on zeroed memory. (TestKernelsMatchCPU compares the moeSpecs cases
// eagerly.)
func TestMoEGraphReplay(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	specs := moeSpecs()
	for _, dt := range floatTypes {
		for _, spec := range []moeSpec{specs[0], specs[1], specs[2]} { // the fixture at a prompt, a decode step, a prefill
			c := moeCase(dt, spec)
			t.Run(c.name, func(t *testing.T) {
				reg, err := Registry()
				require.NoError(t, err)
				inst, err := reg.Select(&c.node, b.Target())
				require.NoError(t, err)
				vals := caseInputs(c, seedOf(c.name))
				in, out := caseTensors(t, b, s, c, vals)
				ws := workspace(t, b, inst)
				for _, p := range ws.Parts() {
					require.NoError(t, b.dev.MemsetBytes(p.Ptr, 0xff, p.Size, s))
				}
				require.NoError(t, inst.Run(in, out, ws, s))
				require.NoError(t, b.dev.SynchronizeStream(s))
				eager := download(t, b, s, out[0])
				matchCPU(t, c, runCPU(t, c, vals), [][]float64{eager}, inst.Tactic())

				clearOut := func() {
					n := int64(len(encodeAny(dt, eager)))
					require.NoError(t, b.dev.MemsetBytes(out[0].Addr, 0xff, n, s))
				}
				require.NoError(t, b.dev.BeginCapture(s))
				require.NoError(t, inst.Run(in, out, ws, s))
				g, err := b.dev.EndCapture(s)
				require.NoError(t, err)
				defer b.dev.DestroyGraph(g)
				clearOut()
				require.NoError(t, b.dev.LaunchGraph(g, s))
				require.NoError(t, b.dev.SynchronizeStream(s))
				require.Equal(t, eager, download(t, b, s, out[0]), "replay")

				// new logits and input in the same buffers: another routing at replay
				vals2 := caseInputs(c, seedOf(c.name)+1)
				for _, i := range []int{0, 1} {
					require.NoError(t, b.CopyIn(in[i].Addr, encodeAny(in[i].DType, vals2[i]), s))
					vals[i] = vals2[i]
				}
				clearOut()
				require.NoError(t, b.dev.LaunchGraph(g, s))
				require.NoError(t, b.dev.SynchronizeStream(s))
				got := download(t, b, s, out[0])
				matchCPU(t, c, runCPU(t, c, vals), [][]float64{got}, inst.Tactic()+"/replay")
			})
		}
	}
}

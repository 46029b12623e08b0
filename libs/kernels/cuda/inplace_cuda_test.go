//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/kernels"
)

// TestInPlaceMatchCPU runs every case whose instance declares an in-place pair (kernels.InPlace)
// with the output at the input's address and compares it with the CPU's outputs, as Select
// chose the tactic (cuDNN blending a FusedConv's Z where it loads) and with the own kernels.
func TestInPlaceMatchCPU(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	reg, err := Registry()
	require.NoError(t, err)
	defer func(v bool) { convForceOwn = v }(convForceOwn)
	ran := 0
	for _, c := range allCases() {
		inst, err := reg.Select(&c.node, b.Target())
		require.NoError(t, err, c.name)
		for _, p := range kernels.InPlaceOf(inst) {
			for _, own := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/out%d=in%d/own=%v", c.name, p.Output, p.Input, own), func(t *testing.T) {
					convForceOwn = own
					vals := caseInputs(c, seedOf(c.name))
					want := runCPU(t, c, vals)
					in, out := caseTensors(t, b, s, c, vals)
					out[p.Output].Addr = in[p.Input].Addr
					require.NoError(t, inst.Run(in, out, workspace(t, b, inst), s))
					require.NoError(t, b.dev.SynchronizeStream(s))
					got := make([][]float64, len(out))
					o := out[p.Output]
					n, err := kernels.ByteSize(o.DType, o.Shape)
					require.NoError(t, err)
					raw := make([]byte, n)
					require.NoError(t, b.CopyOut(raw, o.Addr, s))
					require.NoError(t, b.dev.SynchronizeStream(s))
					got[p.Output] = decodeAny(o.DType, raw)
					one := c
					one.node.Outputs = make([]kernels.Value, len(c.node.Outputs))
					one.node.Outputs[p.Output] = c.node.Outputs[p.Output]
					matchCPU(t, one, want, got, inst.Tactic()+"/in-place")
				})
				ran++
			}
		}
	}
	require.Positive(t, ran)
}

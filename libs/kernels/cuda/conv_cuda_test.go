//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// TestKernelsMatchCPU runs the convolution cases as Select chose them (cuDNN where it loads);
// these tests check the rest: the own kernels where cuDNN would run, every algorithm cuDNN
// offers, the workspace cap of 0, and stream capture.

// The own kernels on every convolution case, in place of cuDNN.
func TestConvOwnMatchCPU(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	defer func(v bool) { convForceOwn = v }(convForceOwn)
	convForceOwn = true
	for _, c := range convCases() {
		t.Run(c.name, func(t *testing.T) {
			vals := caseInputs(c, seedOf(c.name))
			want := runCPU(t, c, vals)
			got, _ := runGPU(t, b, s, c, vals)
			matchCPU(t, c, want, got, convTacticOwn)
		})
	}
}

// cudnnOrSkip skips a test that needs cuDNN when it does not load.
func cudnnOrSkip(t *testing.T) {
	t.Helper()
	if _, err := CudnnVersion(); err != nil {
		t.Skipf("cuDNN is not loaded (every case runs the own kernels): %v", err)
	}
}

// Every choice of every cudnn case's measured ranking (each algorithm cuDNN offers within the
// declared workspace, and the own kernels where they measured) gives the CPU's output; the
// measured need is the fastest choice's and within the cap.
func TestConvCudnnChoices(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	cudnnOrSkip(t)
	v, _ := CudnnVersion()
	t.Logf("cuDNN %d", v)
	reg, err := Registry()
	require.NoError(t, err)
	defer func(v int) { convForceChoice = v }(convForceChoice)
	for _, c := range convCases() {
		inst, err := reg.Select(&c.node, b.Target())
		require.NoError(t, err, c.name)
		if inst.Tactic() != convTacticCudnn {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			ci := inst.(*instance)
			cc := ci.prog[0].call.(*convCall)
			need, err := ci.MeasureWorkspace(b)
			require.NoError(t, err)
			require.LessOrEqual(t, need, cc.desc.WsCap, "the need is within the cap")
			p := lookupPlan(dnnKey{b.dev, cc.desc})
			require.NotNil(t, p)
			require.NotNil(t, p.p, p.why)
			r := p.rank.Load()
			require.True(t, r.measured)
			first := r.choices[0]
			require.Equal(t, first.ws, need, "the need is the fastest choice's")
			t.Logf("%s: need %d of %d bytes; %d choices", ci.Label(b), need, cc.desc.WsCap, len(r.choices))
			vals := caseInputs(c, seedOf(c.name))
			want := runCPU(t, c, vals)
			for i, ch := range r.choices {
				convForceChoice = i
				got, _ := runGPU(t, b, s, c, vals)
				what := convTacticOwn
				if !ch.own {
					names := fwdAlgoNames
					if cc.desc.Backward {
						names = bwdAlgoNames
					}
					what = fmt.Sprintf("cudnn/%s/%s/%dB/%.3fms", nameOf(names, ch.algo), nameOf(mathNames, ch.math), ch.ws, ch.ms)
				}
				matchCPU(t, c, want, got, what)
			}
			convForceChoice = -1
		})
	}
}

// With a workspace cap of 0 no case declares workspace, and each runs (cuDNN's algorithms that
// need none, or the own kernels) to the CPU's output.
func TestConvCapZero(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	reg, err := Registry()
	require.NoError(t, err)
	tg := b.Target().WithWorkspaceCap(0)
	for _, c := range convCases() {
		t.Run(c.name, func(t *testing.T) {
			inst, err := reg.Select(&c.node, tg)
			require.NoError(t, err)
			require.Empty(t, inst.Recipe().Parts)
			vals := caseInputs(c, seedOf(c.name))
			want := runCPU(t, c, vals)
			in, out := caseTensors(t, b, s, c, vals)
			require.NoError(t, inst.Run(in, out, nil, s))
			require.NoError(t, b.dev.SynchronizeStream(s))
			matchCPU(t, c, want, [][]float64{download(t, b, s, out[0])}, inst.(*instance).Label(b))
		})
	}
}

// A convolution runs inside a stream capture: after an eager run, the same choice (warm), its
// replay matching the eager output bit for bit; a shape first met inside a capture runs the
// own kernels there (no cuDNN handle or plan is made during a capture) and matches the CPU, and
// after Prepare the capture runs the measured choice, matching the CPU too.
func TestConvCapture(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	reg, err := Registry()
	require.NoError(t, err)
	var warm kcase
	for _, c := range convCases() {
		if c.name == "Conv-2d-tiles/f16" {
			warm = c
		}
	}
	require.NotEmpty(t, warm.name)
	// a shape no other test plans: batch 3 of ConvT-t2d-stride2-outpad1
	fresh := convSpec{name: "fresh", transpose: true, x: []int64{3, 6, 4, 4}, w: []int64{6, 5, 3, 3}, y: []int64{3, 5, 8, 8},
		attrs: []any{"pads", []int64{1, 1, 1, 1}, "strides", []int64{2, 2}, "output_padding", []int64{1, 1}}, bias: true}
	cold := kcase{name: "ConvT-fresh/f32", node: fresh.node(graph.Float32), kind: "conv"}
	for _, c := range []kcase{warm, cold} {
		vals := caseInputs(c, seedOf(c.name))
		inst, err := reg.Select(&c.node, b.Target())
		require.NoError(t, err)
		in, out := caseTensors(t, b, s, c, vals)
		ws := workspace(t, b, inst)
		var eager []float64
		capture := func() []float64 {
			require.NoError(t, b.dev.BeginCapture(s))
			runErr := inst.Run(in, out, ws, s)
			g, err := b.dev.EndCapture(s)
			require.NoError(t, runErr, c.name)
			require.NoError(t, err, c.name)
			require.NoError(t, b.dev.LaunchGraph(g, s))
			require.NoError(t, b.dev.SynchronizeStream(s))
			got := download(t, b, s, out[0])
			require.NoError(t, b.dev.DestroyGraph(g))
			return got
		}
		if c.name == warm.name {
			require.NoError(t, inst.Run(in, out, ws, s))
			require.NoError(t, b.dev.SynchronizeStream(s))
			eager = download(t, b, s, out[0])
			n, err := kernels.ByteSize(c.node.Outputs[0].DType, c.node.Outputs[0].Shape)
			require.NoError(t, err)
			require.NoError(t, b.dev.MemsetBytes(out[0].Addr, 0xff, n, s))
		}
		got := capture()
		if eager != nil {
			require.Equal(t, eager, got, "%s: the replay is the eager run", c.name)
			continue
		}
		want := runCPU(t, c, vals)
		matchCPU(t, c, want, [][]float64{got}, "captured")
		ci := inst.(*instance)
		cc := ci.prog[0].call.(*convCall)
		require.Nil(t, lookupPlan(dnnKey{b.dev, cc.desc}), "no plan is made during a capture")
		require.NoError(t, ci.Prepare(b))
		require.NotNil(t, lookupPlan(dnnKey{b.dev, cc.desc}), "Prepare makes the plan")
		matchCPU(t, c, want, [][]float64{capture()}, "captured after Prepare: "+ci.Label(b))
	}
}

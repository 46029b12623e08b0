package cuda

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// TestRecordedConvTime: a convolution's recorded time at its declared workspace is the fastest
// recorded choice that fits it; another shape, epilogue or target has none; the committed file
// parses.
func TestRecordedConvTime(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	f := graph.Float32
	conv := func(tg kernels.Target, h int64, op string, in ...kernels.Value) *instance {
		n := nd("", op, kernels.Attrs("pads", []int64{1, 1, 1, 1}), append([]kernels.Value{v(f, 2, 8, h, h), v(f, 16, 8, 3, 3)}, in...), v(f, 2, 16, h, h))
		if op == "FusedConv" {
			n = nd(kernels.DomainMicrosoft, op, kernels.Attrs("pads", []int64{1, 1, 1, 1}, "activation", "Relu"),
				append([]kernels.Value{v(f, 2, 8, h, h), v(f, 16, 8, 3, 3)}, in...), v(f, 2, 16, h, h))
		}
		inst, err := reg.Select(&n, tg)
		require.NoError(t, err)
		return inst.(*instance)
	}
	call := func(i *instance) *convCall { return i.prog[0].call.(*convCall) }
	at := conv(h200, 16, "Conv")
	c := call(at)
	require.Equal(t, convTacticCudnn, at.Tactic())
	rec := convRecord{Device: "NVIDIA H200", Arch: h200.Arch, SMs: h200.SMs, Desc: c.desc, Epilogue: c.epilogue,
		Choices: []convTimed{{What: "cuDNN FFT fma", Ws: c.desc.WsCap + 1, Ms: 0.05}, {What: "cuDNN WINOGRAD fma", Ws: c.desc.WsCap, Ms: 0.1},
			{What: "own", Ms: 0.3}}}
	line, err := json.Marshal(rec)
	require.NoError(t, err)
	small := rec
	small.Desc.WsCap, small.Choices = 0, rec.Choices[2:]
	smaller, err := json.Marshal(small)
	require.NoError(t, err)
	recs := map[convTimeKey]convRecord{}
	require.NoError(t, parseConvTimes(append(append(append(line, '\n', '\n'), smaller...), '\n'), recs))
	require.Len(t, recs, 1)
	// declared is the recorded time of i's convolution within the workspace it declares
	declared := func(i *instance) (kernels.RecordedTime, bool) { c := call(i); return c.recordedIn(recs, c.desc.WsCap) }
	require.Len(t, recs[convTimeKey{h200.Arch, h200.SMs, small.Desc, c.epilogue}].Choices, 3, "the record that admitted the most stands")

	got, ok := declared(at)
	require.True(t, ok)
	require.Equal(t, kernels.RecordedTime{Ms: 0.1, What: "cuDNN WINOGRAD fma", Device: "NVIDIA H200"}, got, "the fastest within the declared workspace")
	got, ok = c.recordedIn(recs, c.desc.WsCap-1)
	require.True(t, ok)
	require.Equal(t, "own", got.What, "within a part carved smaller than declared")
	capped := h200
	zero := int64(0)
	capped.WorkspaceCap = &zero
	got, ok = declared(conv(capped, 16, "Conv"))
	require.True(t, ok)
	require.Equal(t, "own", got.What, "at a cap of 0 only what needs no workspace")

	_, ok = declared(conv(h200, 32, "Conv"))
	require.False(t, ok, "another shape")
	_, ok = declared(conv(h200, 16, "FusedConv"))
	require.False(t, ok, "another epilogue")
	withRelu := rec
	withRelu.Epilogue = convEpiBias | convEpiRelu
	line, err = json.Marshal(withRelu)
	require.NoError(t, err)
	require.NoError(t, parseConvTimes(line, recs))
	got, ok = declared(conv(h200, 16, "FusedConv"))
	require.True(t, ok, "a Relu without a bias takes the record with a bias and a Relu")
	require.Equal(t, 0.1, got.Ms)
	other := h200
	other.SMs = 108
	_, ok = declared(conv(other, 16, "Conv"))
	require.False(t, ok, "another target")

	require.Error(t, parseConvTimes([]byte("{\"desc\": 3}\n"), map[convTimeKey]convRecord{}))
	_, err = convTimeRecords()
	require.NoError(t, err, "the committed records")
}

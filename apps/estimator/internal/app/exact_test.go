package app

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/bundled"
	"carve.dev/libs/graph/rewrite"
)

// TestReportIsTheReservation pins the estimator's central promise: the arena it reports for a
// binding is, to the byte, engine.Plan's peak, which is what the runner reserves; for ranges it
// is PlanEnvelope's ArenaBytes, the runner's reservation for the envelope.
func TestReportIsTheReservation(t *testing.T) {
	qwen := fixture(t, "qwen2_q4")
	for _, tc := range []struct {
		model     string // "" for the bundled model
		dims      []string
		noInPlace bool
	}{
		{"", []string{"batch=3", "seq=17"}, false},
		{"", []string{"batch=3", "seq=17"}, true},
		{qwen, []string{"batch=1:8", "seq=5:64"}, true},
		{"", []string{"batch=1:4", "seq=1:128"}, false},
		{qwen, []string{"batch=2", "seq=9"}, false},
		{qwen, []string{"batch=1:8", "seq=5:64"}, false},
	} {
		args := []string{"report", "--format", "json", "--workers", "3"}
		if tc.model != "" {
			args = append(args, "--model", tc.model)
		}
		for _, d := range tc.dims {
			args = append(args, "--dim", d)
		}
		if tc.noInPlace {
			args = append(args, "--no-inplace")
		}
		stdout, stderr, code := run(t, args...)
		require.Equal(t, ExitOK, code, stderr)
		var r report
		require.NoError(t, json.Unmarshal([]byte(stdout), &r))

		var m *graph.Model
		var err error
		if tc.model == "" {
			m, err = bundled.Load()
		} else {
			m, err = graph.Load(tc.model)
		}
		require.NoError(t, err)
		m, _, err = rewrite.Fuse(m, rewrite.Options{}) // as the estimator and the runner do
		require.NoError(t, err)
		env, err := engine.ParseEnvelope(tc.dims)
		require.NoError(t, err)
		opts := engine.Options{Workers: 3, NoInPlace: tc.noInPlace} // as the runner is configured
		ep, err := engine.PlanEnvelope(context.Background(), m, env, opts)
		require.NoError(t, err)
		require.Equal(t, ep.ArenaBytes, r.ArenaBytes, "%v", tc.dims)
		require.Equal(t, ep.WeightBytes, r.WeightsBytes)
		require.Equal(t, ep.TotalBytes(), r.TotalBytes)
		require.Equal(t, ep.WorkspaceBound(), r.WorkspaceBoundBytes)
		require.Equal(t, ep.Worst.Binding.Dims, r.WorstBinding)
		require.Len(t, r.Candidates, len(ep.Candidates))
		require.Equal(t, !tc.noInPlace, r.InPlace)
		require.Equal(t, ep.Worst.Lifetimes.InPlace, r.InPlaceOutputs)
		require.Equal(t, tc.noInPlace, r.InPlaceOutputs == 0, "%v: in place unless --no-inplace", tc.dims)

		single := true
		for _, x := range env {
			single = single && x.Fixed()
		}
		if single {
			b := engine.Binding{}
			for n, x := range env {
				b[n] = x.Lo
			}
			p, err := engine.Plan(context.Background(), m, b, opts)
			require.NoError(t, err)
			require.Equal(t, p.Plan.Peak, r.ArenaBytes, "a binding's arena is engine.Plan's peak")
			require.Equal(t, p.ArenaBytes(), r.ArenaBytes)
			require.Equal(t, p.Plan.LowerBound, r.ArenaLowerBoundBytes)
			require.Len(t, r.Candidates, 1)
		}
		if tc.model != "" {
			require.NoError(t, m.Close())
		}
	}
}

package app

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
)

// The report groups op types into categories, takes a floor per launch off each, and the gap
// is the step's time less the net sum.
func TestProfileReport(t *testing.T) {
	mm1 := &graph.Node{Name: "q", OpType: "MatMul"}
	mm2 := &graph.Node{Name: "o", OpType: "MatMul"}
	gqa := &graph.Node{Name: "attn", OpType: "GroupQueryAttention", Domain: "com.microsoft"}
	add := &graph.Node{Name: "bias", OpType: "Add"}
	p := &engine.Profile{Runs: 2, FloorMs: 0.004, Kernels: []engine.KernelTime{ // floor 2 us
		{Node: mm1, Tactic: "cublaslt", Launches: 2, Ms: 0.024},
		{Node: mm2, Tactic: "cublaslt", Launches: 2, Ms: 0.016},
		{Node: gqa, Tactic: "split-kv", Launches: 2, Ms: 0.044},
		{Node: add, Tactic: "direct", Launches: 2, Ms: 0.008},
	}}
	r := newProfileReport(p, 0.1)
	require.InDelta(t, 0.046, r.KernelMs, 1e-12)
	require.InDelta(t, 0.002, r.FloorMs, 1e-12)
	require.InDelta(t, 0.046-4*0.002, r.NetMs, 1e-12)
	require.InDelta(t, 0.1-r.NetMs, r.GapMs, 1e-12)
	require.EqualValues(t, 4, r.Kernels)
	require.Len(t, r.Categories, 3)
	require.Equal(t, "attention", r.Categories[0].Name) // 0.022 ms raw
	require.Equal(t, "GEMM", r.Categories[1].Name)      // 0.020 ms raw, 2 kernels
	require.InDelta(t, 0.016, r.Categories[1].NetMs, 1e-12)
	require.Equal(t, "elementwise", r.Categories[2].Name)
	var share float64
	for _, c := range r.Categories {
		share += c.Share
	}
	require.InDelta(t, 1, share, 1e-12)
	require.Equal(t, "attn (GroupQueryAttention, split-kv)", r.Top[0].Name)
	var b bytes.Buffer
	printProfile(&b, "the decode step", r)
	require.Contains(t, b.String(), "net: less 2.0 us per kernel")
	require.Contains(t, b.String(), "gap (launches, host)")
}

package graph_test

import (
	"testing"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
)

// The benchmarks use the 28-layer Qwen2-1.5B-shaped graph (2234 nodes) without its weights.

func BenchmarkLoad(b *testing.B) {
	path := testmodels.MustGet("qwen2_1p5b_graph").WriteTemp(b)
	b.ReportAllocs()
	for b.Loop() {
		m, err := graph.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

func BenchmarkBind(b *testing.B) {
	m := loadFixture(b, testmodels.MustGet("qwen2_1p5b_graph"))
	dims := map[string]int64{"batch": 4, "seq": 2048}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := graph.Bind(m, dims); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLifetimes(b *testing.B) {
	m := loadFixture(b, testmodels.MustGet("qwen2_1p5b_graph"))
	bd, err := graph.Bind(m, map[string]int64{"batch": 4, "seq": 2048})
	if err != nil {
		b.Fatal(err)
	}
	ws := func(n *graph.Node) (int64, error) { return int64(n.Index % 3 * 4096), nil }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bd.Lifetimes(ws); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadBindLifetimes is the estimator's path from a file to a planner problem.
func BenchmarkLoadBindLifetimes(b *testing.B) {
	path := testmodels.MustGet("qwen2_1p5b_graph").WriteTemp(b)
	b.ReportAllocs()
	for b.Loop() {
		m, err := graph.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		bd, err := graph.Bind(m, map[string]int64{"batch": 1, "seq": 4096})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bd.Lifetimes(nil); err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"carve.dev/libs/planner"
)

// BenchmarkPlannerRealModels solves the lifetimes of real model runs (the 28-layer
// Qwen2-1.5B-shaped graph and the tiny fixtures) with the engine's default solver and reports
// the peak over the lower bound. Target: within 1% of the lower bound in under 50 ms.
func BenchmarkPlannerRealModels(b *testing.B) {
	cases := []struct {
		model string
		dims  Binding
	}{
		{"qwen2_1p5b_graph", Binding{"batch": 1, "seq": 1}},
		{"qwen2_1p5b_graph", Binding{"batch": 1, "seq": 2048}},
		{"qwen2_1p5b_graph", Binding{"batch": 8, "seq": 4096}},
		{"qwen2_1p5b_graph", Binding{"batch": 64, "seq": 32768}},
		{"gpt2", Binding{"batch": 3, "seq": 16}},
		{"bert", Binding{"batch": 3, "seq": 16}},
		{"qwen2_q4", Binding{"batch": 3, "seq": 16}},
	}
	for _, c := range cases {
		m := loadFixture(b, c.model)
		p, err := Plan(context.Background(), m, c.dims, Options{Workers: 4})
		if err != nil {
			b.Fatal(err)
		}
		prob := p.Lifetimes.Problem
		b.Run(fmt.Sprintf("%s/%s", c.model, c.dims), func(b *testing.B) {
			var plan planner.Plan
			for b.Loop() {
				plan, err = solve(context.Background(), prob, p.Options)
				if err != nil {
					b.Fatal(err)
				}
			}
			over := float64(plan.Peak-plan.LowerBound) / float64(plan.LowerBound) * 100
			b.ReportMetric(over, "%over-LB")
			b.ReportMetric(float64(len(prob.Buffers)), "buffers")
			b.ReportMetric(float64(plan.Elapsed)/float64(time.Millisecond), "ms/solve")
		})
	}
}

package rewritetest

import "carve.dev/libs/graph"

// CopiesAroundAttention counts the movement ops that copy float data (Transpose, Gather,
// Slice, Split) around m's ai.onnx Attention nodes: between an Attention and the
// LayerNormalization its inputs are projected from, and between it and the residual Add (one
// of two computed inputs) or LayerNormalization its output reaches. What an Attention reads
// or writes through its layouts (graph.AttrQLayout) counts none.
func CopiesAroundAttention(m *graph.Model) int {
	copies := map[*graph.Node]bool{}
	isCopy := func(n *graph.Node) bool {
		switch n.OpType {
		case "Transpose", "Gather", "Slice", "Split":
			return n.Domain == "" && n.Outputs[0].DType != graph.Int64 && !n.Outputs[0].Host
		}
		return false
	}
	stop := func(n *graph.Node) bool {
		if n.OpType == "LayerNormalization" {
			return true
		}
		if n.OpType != "Add" {
			return false
		}
		computed := 0
		for _, in := range n.Inputs {
			if in != nil && in.Kind == graph.KindActivation {
				computed++
			}
		}
		return computed == 2
	}
	for _, a := range m.Nodes {
		if a.OpType != "Attention" || a.Domain != "" {
			continue
		}
		seen := map[*graph.Node]bool{}
		var back func(v *graph.Value)
		back = func(v *graph.Value) {
			p := v.Producer
			if p == nil || seen[p] || stop(p) || v.Kind != graph.KindActivation || v.Host {
				return
			}
			seen[p] = true
			if isCopy(p) {
				copies[p] = true
			}
			for _, in := range p.Inputs {
				if in != nil {
					back(in)
				}
			}
		}
		for _, in := range a.Inputs[:3] {
			back(in)
		}
		var fwd func(v *graph.Value)
		fwd = func(v *graph.Value) {
			for _, c := range v.Consumers {
				if seen[c] || stop(c) {
					continue
				}
				seen[c] = true
				if isCopy(c) {
					copies[c] = true
				}
				for _, o := range c.Outputs {
					if o != nil && !o.Host {
						fwd(o)
					}
				}
			}
		}
		fwd(a.Outputs[0])
	}
	return len(copies)
}

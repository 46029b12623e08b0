package rewrite

import (
	"fmt"

	"carve.dev/libs/graph"
)

// GatherElements(data, Expand(indices, shape)) becomes dev.carve.GatherElements(data, indices,
// shape), whose kernels read the indices where they broadcast: the expanded indices, a tensor of
// the output's shape in int64, are never written. PyTorch's expand is a view, so an exported
// torch.gather(x, -1, idx.expand(...)) (DeBERTa's relative-position gathers) materialises them
// only in ONNX. The Expand stays while anything else reads its output. The shape is read at
// Bind as the Expand's is (it was, for the exported graph to load).

// expandedGatherCandidate: a GatherElements whose indices an Expand makes.
func expandedGatherCandidate(n *graph.Node) bool {
	return is(n, "GatherElements") && len(n.Inputs) == 2 && from(n.Inputs[1], "Expand") != nil
}

// matchExpandedGather matches the GatherElements g.
func matchExpandedGather(g *graph.Node) (*match, string) {
	ex := g.Inputs[1].Producer
	idx, shape := ex.Inputs[0], ex.Inputs[1]
	if idx.DType != graph.Int64 && idx.DType != graph.Int32 {
		return nil, fmt.Sprintf("the indices %s are %s", idx.Name, idx.DType)
	}
	y := g.Outputs[0]
	return &match{
		kind: ExpandedGather, root: g, interior: []*graph.Node{g},
		add: []graph.NodeSpec{{Name: g.Name + "/GatherElements", OpType: "GatherElements", Domain: graph.DomainCarve,
			Inputs: []string{g.Inputs[0].Name, idx.Name, shape.Name}, Outputs: []string{y.Name}, Attrs: g.Attrs}},
		opsets: map[string]int64{graph.DomainCarve: 1},
		detail: fmt.Sprintf("indices %s%v broadcast to %v", idx.Name, idx.Shape, ex.Outputs[0].Shape),
	}, ""
}

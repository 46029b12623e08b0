package kernels

import (
	"errors"
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
)

// What every backend's Select and Bound check around the plan they build, and its instances'
// Run around the tensors it is given, in one place, so that the backends keep only their plans
// (and cannot drift apart: a rule added here holds for all).

// MaxRecipeParts bounds the parts of one kernel's workspace recipe. A kernel that needs more
// is a kernel to split.
const MaxRecipeParts = 8

// CheckNodeSizes checks that every present input and output of n has a byte size that fits in
// an int64, before any backend plans the node.
func CheckNodeSizes(n *Node) error {
	for _, vs := range [][]Value{n.Inputs, n.Outputs} {
		for _, v := range vs {
			if !v.Present() {
				continue
			}
			if _, err := ByteSize(v.DType, v.Shape); err != nil {
				return err
			}
		}
	}
	return nil
}

// InstanceRecipe returns the label and the workspace recipe of an instance of op key at n with
// tactic and parts: the label "node:domain.Op/tactic" (without "node:" for an unnamed node)
// names the recipe, which must have at most MaxRecipeParts parts and a size that fits.
func InstanceRecipe(n *Node, key OpKey, tactic string, parts []alloc.Part) (string, alloc.Recipe, error) {
	label := fmt.Sprintf("%s/%s", key, tactic)
	if n.Name != "" {
		label = n.Name + ":" + label
	}
	r := alloc.Recipe{Kernel: label, Parts: parts}
	if len(parts) > MaxRecipeParts {
		return "", r, fmt.Errorf("recipe has %d parts, more than %d", len(parts), MaxRecipeParts)
	}
	if _, err := r.Size(); err != nil {
		return "", r, err
	}
	return label, r, nil
}

// CheckRange checks a node range's dims before any backend bounds it: every range is [Lo, Hi]
// with 0 <= Lo <= Hi.
func CheckRange(r *NodeRange) error {
	for _, vs := range [][]ValueRange{r.Inputs, r.Outputs} {
		for _, v := range vs {
			for _, dr := range v.Dims {
				if dr.Lo < 0 || dr.Hi < dr.Lo {
					return fmt.Errorf("invalid dim range [%d, %d]", dr.Lo, dr.Hi)
				}
			}
		}
	}
	return nil
}

// Expect is what an instance's Run checks of one input or output of its node.
type Expect struct {
	Present bool
	DType   graph.DType
	Shape   []int64
	Bytes   int64 // the dense tensor's size
}

// Expectations are the Expects of a node's values vs, whose sizes Select checked
// (CheckNodeSizes).
func Expectations(vs []Value) []Expect {
	out := make([]Expect, len(vs))
	for i, v := range vs {
		if !v.Present() {
			continue
		}
		b, _ := ByteSize(v.DType, v.Shape)
		out[i] = Expect{Present: true, DType: v.DType, Shape: append([]int64(nil), v.Shape...), Bytes: b}
	}
	return out
}

// ErrRunArity is Run's error for fewer tensors than the node has values.
var ErrRunArity = errors.New("wrong number of inputs or outputs")

// CheckTensors checks, for an instance's Run, that got holds a tensor of the dtype and shape of
// every present value of want (kind names them in errors: "input", "output"); where each one's
// data lies is the backend's to check. It allocates only to report an error.
func CheckTensors(kind string, want []Expect, got []Tensor) error {
	if len(got) < len(want) {
		return ErrRunArity
	}
	for j := range want {
		w := &want[j]
		if !w.Present {
			continue
		}
		t := &got[j]
		if t.DType != w.DType || len(t.Shape) != len(w.Shape) {
			return fmt.Errorf("%s %d is %v, want %v%v", kind, j, *t, w.DType, w.Shape)
		}
		for k, d := range w.Shape {
			if t.Shape[k] != d {
				return fmt.Errorf("%s %d has shape %v, want %v", kind, j, t.Shape, w.Shape)
			}
		}
	}
	return nil
}

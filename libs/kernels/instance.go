package kernels

import (
	"fmt"

	"carve.dev/libs/alloc"
)

// What every backend's Select and Bound check around the plan they build, in one place, so that
// the backends keep only their plans (and cannot drift apart: a rule added here holds for all).

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

package kernels

import (
	"slices"

	"carve.dev/libs/alloc"
)

// Kernel is one op on one backend, with all of its tactics. Implementations are immutable and
// safe for concurrent use.
type Kernel interface {
	// Op is the op the kernel implements.
	Op() OpKey
	// Backend is the backend the kernel runs on, for example "cpu".
	Backend() string
	// Tactics lists every tactic the kernel may select, for docs and the CLI.
	Tactics() []TacticInfo
	// Select validates a node at concrete shapes and picks a tactic: a pure function of the
	// node's dtypes, shapes and attributes and of d. The Instance it returns is bound to those
	// shapes.
	Select(n *Node, d Target) (Instance, error)
	// Bound is W: an upper bound of Instance.Recipe().Size() over every concrete node within r,
	// over every tactic Select can reach for such nodes. It never under-estimates.
	Bound(r *NodeRange, d Target) (Bound, error)
}

// Instance is a kernel bound to one node at concrete shapes, with its tactic chosen. It is
// immutable and safe for concurrent use, provided concurrent Runs get distinct outputs and
// workspaces.
type Instance interface {
	// Tactic is the chosen tactic's name.
	Tactic() string
	// Recipe is the node's workspace: R is its Size, and the runner carves exactly this Recipe.
	Recipe() alloc.Recipe
	// Run executes the node on stream s. in and out are ordered as the node's inputs and
	// outputs (absent optional ones have a zero Tensor); their dtypes and shapes must be those
	// the instance was selected for. ws is the Recipe carved by alloc.Carve (nil when the Recipe
	// has no parts). Run never allocates device or workspace memory; a workspace that does not
	// match the Recipe is refused before any output is written. The CPU backend runs
	// synchronously on the calling goroutine and ignores s: the runner calls Run from the
	// stream's work.
	Run(in, out []Tensor, ws *alloc.Workspace, s alloc.Stream) error
}

// TacticInfo describes one tactic for listings.
type TacticInfo struct {
	Name      string
	Summary   string
	Workspace bool // whether the tactic asks for workspace at all
}

// Bound is a workspace bound W and the tactic that attains it.
type Bound struct {
	Bytes  int64
	Tactic string // "" when no reachable tactic needs workspace
}

// Max returns the larger of two bounds (b on ties).
func (b Bound) Max(o Bound) Bound {
	if o.Bytes > b.Bytes {
		return o
	}
	return b
}

// Execute carves inst's Recipe from region, all or nothing, and runs it on s. A region too
// small for the Recipe is refused by the carver (*alloc.WorkspaceTooSmallError) before the
// kernel starts. Carving allocates; a runner that executes a plan repeatedly carves once per
// node and calls Run.
func Execute(inst Instance, in, out []Tensor, region alloc.Region, s alloc.Stream) error {
	r := inst.Recipe()
	if len(r.Parts) == 0 {
		return inst.Run(in, out, nil, s)
	}
	ws, err := alloc.Carve(region, r)
	if err != nil {
		return err
	}
	return inst.Run(in, out, ws, s)
}

// InPlace is one pair of a kernel's in-place contract: output Output may be given input Input's
// bytes. An Instance that implements InPlacer lists its pairs; the planner (libs/engine) may then
// place the output at the input's address when the two have one dtype and byte size, nothing
// else of the node reads those bytes (no other input and no workspace is placed there) and no
// later step reads the input. For each pair the kernel keeps this invariant, in every schedule
// of its workers: it reads element k of input Input only before it writes element k of output
// Output, and writes no other output element over it; so it computes what it computes with
// distinct buffers. Elementwise kernels keep it when the input is not broadcast (each output
// element reads its own input element, then is written); kernels that write the output before
// reading the input, or read an input element after its output element (a tile started before
// its addend is read, an accumulation over the output), must not declare the pair.
type InPlace struct{ Output, Input int }

// InPlacer is implemented by an Instance whose outputs may take inputs' bytes (InPlace).
type InPlacer interface {
	// InPlace lists the instance's pairs, at the shapes it was selected for; nil for none.
	InPlace() []InPlace
}

// InPlaceOf returns inst's in-place pairs: nil unless it implements InPlacer.
func InPlaceOf(inst Instance) []InPlace {
	if p, ok := inst.(InPlacer); ok {
		return p.InPlace()
	}
	return nil
}

// ElementwiseInPlace returns the pairs (0, j) for each input j of n given (or every input when
// none is) that has output 0's dtype and shape: an elementwise kernel's contract, which excludes
// broadcast inputs and inputs of another type.
func ElementwiseInPlace(n *Node, inputs ...int) []InPlace {
	if len(n.Outputs) == 0 || !n.Outputs[0].Present() {
		return nil
	}
	if len(inputs) == 0 {
		for j := range n.Inputs {
			inputs = append(inputs, j)
		}
	}
	out := n.Outputs[0]
	var pairs []InPlace
	for _, j := range inputs {
		if j < len(n.Inputs) {
			v := n.Inputs[j]
			if v.Present() && v.DType == out.DType && slices.Equal(v.Shape, out.Shape) {
				pairs = append(pairs, InPlace{Output: 0, Input: j})
			}
		}
	}
	return pairs
}

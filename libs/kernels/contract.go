package kernels

import (
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

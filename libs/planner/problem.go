// Package planner places the buffers of a sequential run inside one arena: lifetimes in, offsets out.
package planner

// DefaultAlign is the alignment of every device buffer unless a buffer asks for more.
// 256 bytes is what cuBLAS and cuDNN require, and a multiple of every CPU alignment we use.
const DefaultAlign int64 = 256

// Kind says what a buffer holds. The planner treats all kinds alike; kinds only label plans.
type Kind uint8

const (
	Activation Kind = iota // an intermediate value produced by one step and read by later ones
	Workspace              // a kernel's scratch; lives for its node's step only
	Output                 // a graph output; lives to the end of the run
	Input                  // a graph input copied into the arena
)

func (k Kind) String() string {
	switch k {
	case Activation:
		return "activation"
	case Workspace:
		return "workspace"
	case Output:
		return "output"
	case Input:
		return "input"
	}
	return "unknown"
}

// Buffer is one request for arena bytes over a half-open lifetime [Start, End) in steps.
type Buffer struct {
	ID    string // unique within a Problem; MiniMalloc's id column, or a value or node name
	Size  int64  // bytes; 0 is allowed and takes no space
	Align int64  // 0 means DefaultAlign; otherwise a power of two
	Start int    // first step that needs the bytes
	End   int    // first step that no longer needs them; End > Start
	Kind  Kind
	Node  string // for workspaces: the node that owns it
}

// Problem is an offline dynamic storage allocation instance.
type Problem struct {
	Buffers  []Buffer
	Capacity int64 // 0: unbounded; otherwise every buffer must end at or below Capacity
}

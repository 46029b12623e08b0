package alloc

// DefaultPartAlign is the alignment of a workspace part that does not ask for another one:
// cuBLAS's and cuDNN's requirement, and a multiple of every CPU vector width.
const DefaultPartAlign int64 = 256

// Part is one named piece of a kernel's workspace, for example "partials" or "scores". It is a
// plain value, safe to copy and to read concurrently.
type Part struct {
	Name  string
	Size  int64 // bytes; 0 is allowed and carves an empty part
	Align int64 // 0 means DefaultPartAlign; otherwise a power of two
}

// Recipe is a kernel's workspace: its parts, in carving order. A kernel computes its Recipe with
// one function, and that one Recipe both sizes the workspace (Size) and drives the carving
// (Carve), which share one layout function, so sizing and execution cannot disagree. A Recipe
// is a plain value, safe to read concurrently; its methods do not modify it.
type Recipe struct {
	Kernel string // the kernel (node and tactic) the recipe belongs to, for error messages
	Parts  []Part
}

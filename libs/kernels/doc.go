// Package kernels is the workspace contract between ops and the memory planner, and the registry of kernels per backend.
//
// Every (op, backend, tactic) states its workspace the same way:
//
//   - Kernel.Select picks a tactic for one node at concrete shapes, as a pure function of the
//     node's shapes and attributes and the Device, and returns an Instance.
//   - Instance.Recipe is the workspace as named parts (an alloc.Recipe). Its Size is the node's
//     requirement R, and the very same Recipe is carved at run time, so sizing and execution
//     cannot disagree.
//   - Kernel.Bound returns W: the worst case of R over shape ranges, over every tactic Select can
//     reach for shapes in those ranges.
//   - Instance.Run executes on inputs, outputs and the carved workspace; it never allocates
//     device or workspace memory itself.
//
// Backends (the CPU one lives in carve.dev/libs/kernels/cpu) register their kernels in a Registry,
// which the estimator and the runner query per node.
package kernels

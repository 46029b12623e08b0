package engine

import (
	"fmt"
	"math"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
)

// Where a value's bytes are at run time. On a discrete device a kernel reaches only device
// memory, so every value a kernel reads or writes as data, and every graph output, is in one of
// three places:
//   - resident: uploaded once when the runtime loads, shared by its sessions and programs — the
//     values whose data is known at load and the same at every binding: weights (initializers)
//     and the outputs of Constant nodes (TorchScript exports are full of them);
//   - planned: in the arena of the program (one pattern bound to one session) — graph inputs,
//     copied in every run; activations; and the host-computed values of the binding (shape
//     arithmetic such as Range(0, seq)), which differ by binding and are copied in when the
//     program becomes the arena's tenant, outside any captured graph;
//   - held: in a state buffer (RuntimeOptions.State).
//
// A view's bytes are its input's. locate applies the rule, compile binds by it, and NewRuntime
// checks it at load for the envelope's plan (checkDeviceReads): a value with no device bytes
// fails there with a *DeviceReadError naming the node and the value, before anything is
// uploaded, instead of at a session's first run.

// placeKind is one of the places a value's bytes can be.
type placeKind uint8

const (
	nowhere   placeKind = iota // no bytes: a bug in the bookkeeping if anything reads it
	inArena                    // place.index: the buffer in Lifetimes.Problem.Buffers
	inState                    // place.index: the state buffer in RuntimeOptions.State
	resident                   // a weight or a Constant output: Runtime.weights[root.ID]
	hostInput                  // place.index: the graph input, read in the caller's bytes (host-visible backends)
	hostData                   // a host value of the binding, read where Bind left it (host-visible backends)
)

// place is where a value's bytes are under a plan, before any address is known.
type place struct {
	kind  placeKind
	index int
	root  *graph.Value // the value whose bytes these are: the value itself, or a view's source
}

// locate says where v's bytes are under p, following views to their source.
func (rt *Runtime) locate(p *Planned, v *graph.Value) place {
	for {
		if bi, ok := rt.stateOf[v.ID]; ok {
			return place{kind: inState, index: bi, root: v}
		}
		if i, ok := p.Lifetimes.Buffer(v); ok {
			return place{kind: inArena, index: i, root: v}
		}
		switch {
		case loadTime(v):
			return place{kind: resident, root: v}
		case v.Kind == graph.KindInput:
			return place{kind: hostInput, index: rt.inputIndex[v], root: v}
		case v.Host:
			return place{kind: hostData, root: v}
		}
		prod := v.Producer
		if prod == nil || !prod.IsView() || prod.Input(0) == nil {
			return place{kind: nowhere, root: v}
		}
		v = prod.Input(0)
	}
}

// loadTime reports whether v's data is known at load and the same at every binding: a weight or
// a Constant node's output.
func loadTime(v *graph.Value) bool {
	return v.Kind == graph.KindInitializer || v.Kind == graph.KindConstant
}

// loadTimeValues are m's weights, then its Constant outputs in node order.
func loadTimeValues(m *graph.Model) []*graph.Value {
	vs := append([]*graph.Value(nil), m.Initializers...)
	for _, n := range m.Nodes {
		for _, o := range n.Outputs {
			if o != nil && o.Kind == graph.KindConstant {
				vs = append(vs, o)
			}
		}
	}
	return vs
}

// loadTimeSize is the size in bytes of a load-time value.
func loadTimeSize(m *graph.Model, v *graph.Value) int64 {
	if v.Kind == graph.KindInitializer {
		return v.Init.Size
	}
	c, _ := m.Constant(v)
	return int64(len(c.Data))
}

// loadTimeName names a load-time value in errors: weight "w", constant "c".
func loadTimeName(v *graph.Value) string {
	if v.Kind == graph.KindConstant {
		return fmt.Sprintf("constant %q", v.Name)
	}
	return fmt.Sprintf("weight %q", v.Name)
}

// loadTimeBytes returns a load-time value's host bytes: a weight's (mapped from the model file)
// or a Constant's.
func loadTimeBytes(m *graph.Model, v *graph.Value) ([]byte, error) {
	if v.Kind == graph.KindInitializer {
		return v.Init.Bytes()
	}
	c, ok := m.Constant(v)
	if !ok {
		return nil, fmt.Errorf("constant %q has no data (a bug)", v.Name)
	}
	return c.Data, nil
}

// deviceWeightLayout places the load-time values that kernels read (the weights and the Constant
// outputs) in one block of a discrete device's memory: offsets by Value.ID (-1 for values that
// stay on the host), each aligned to alloc.DefaultPartAlign, and the block's size. The
// estimator's DeviceWeightBytes and the runtime's upload use it both, so they agree to the byte.
func deviceWeightLayout(m *graph.Model) ([]int64, int64, error) {
	offsets := make([]int64, len(m.Values))
	for i := range offsets {
		offsets[i] = -1
	}
	var end int64
	for _, v := range loadTimeValues(m) {
		size := loadTimeSize(m, v)
		if !v.ReadByKernel() || size == 0 {
			continue
		}
		off := (end + alloc.DefaultPartAlign - 1) &^ (alloc.DefaultPartAlign - 1)
		if off < end || size > math.MaxInt64-off {
			return nil, 0, fmt.Errorf("the sizes of the weights overflow int64")
		}
		offsets[v.ID], end = off, off+size
	}
	return offsets, end, nil
}

// DeviceReadError reports, at load, a value that a kernel on a discrete device reads or writes,
// or a graph output, that would have no bytes in the device's memory: neither resident (a weight
// or a Constant, uploaded once), nor planned in the arena, nor held in a state buffer. It means
// the engine's bookkeeping missed a kind of value, not that the model is wrong.
type DeviceReadError struct {
	Node   *graph.Node  // the kernel, when known; nil for a graph output or a program's binding
	Output bool         // the value is a graph output, which the run copies out of the device
	Value  *graph.Value // what it reads
	Root   *graph.Value // whose bytes Value's are: Value itself, or the source of the view Value is
	Device string
}

func (e *DeviceReadError) Error() string {
	by, reads := "", "a kernel reads it"
	switch {
	case e.Node != nil:
		by = e.Node.String() + ": "
	case e.Output:
		by, reads = "graph output: ", "the run returns it"
	}
	what := e.Root.Kind.String()
	if e.Root.Host && e.Root.Kind == graph.KindActivation {
		what = "host-computed value"
	}
	of := ""
	if e.Root != e.Value {
		of = fmt.Sprintf(", a view of %q", e.Root.Name)
	}
	return fmt.Sprintf("engine: %svalue %q%s (%s) has no bytes on device %s (%s, but it is neither resident nor planned)",
		by, e.Value.Name, of, what, e.Device, reads)
}

// checkDeviceReads checks the rule above for plan p on a discrete device, whose resident block is
// laid out by offsets (deviceWeightLayout). Where a value lies does not depend on the binding,
// only whether it has bytes at all, so the envelope's plan speaks for every pattern; compile
// checks each program again as it binds it.
func (rt *Runtime) checkDeviceReads(p *Planned, offsets []int64) error {
	check := func(n *graph.Node, v *graph.Value, output bool) error {
		if v == nil || p.Binding.Size(v) == 0 {
			return nil
		}
		switch pl := rt.locate(p, v); pl.kind {
		case inArena, inState:
			return nil
		case resident:
			if offsets[pl.root.ID] >= 0 {
				return nil
			}
			fallthrough
		default:
			return &DeviceReadError{Node: n, Output: output, Value: v, Root: pl.root, Device: rt.Backend.Name()}
		}
	}
	for _, st := range p.Steps {
		if st.Kind != RunKernel {
			continue
		}
		for _, v := range st.Node.Inputs {
			if err := check(st.Node, v, false); err != nil {
				return err
			}
		}
		for _, v := range st.Node.Outputs {
			if err := check(st.Node, v, false); err != nil {
				return err
			}
		}
	}
	for _, v := range rt.Model.Outputs {
		if err := check(nil, v, true); err != nil {
			return err
		}
	}
	return nil
}

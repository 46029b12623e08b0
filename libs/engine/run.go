package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/planner"
)

// program is a pattern's plan bound to one session's arena: every kernel's input and output
// tensors point at planned bytes (by the backend's Bind) and every workspace is carved, so a run
// only moves the graph inputs in and the outputs out, and launches. Built once per pattern and
// session; a run allocates nothing.
//
// On a host-visible backend (the CPU) kernels read graph inputs, weights, constants and
// host-computed values where they lie, and the outputs alias the arena. On a discrete device every
// value a kernel reads is in device memory (resident.go): weights and Constant outputs resident in
// the runtime, graph inputs and host values in the arena (graph.DeviceResident), so a run copies
// the inputs in, the host values when the program becomes the arena's tenant, and the outputs out
// into host buffers the program owns.
type program struct {
	planned *Planned
	steps   []progStep
	launch  []func() // one per kernel step, for a Launcher backend

	// Host-visible backends: inputs[i] lists the tensors to point at graph input i's bytes.
	inputs [][]*kernels.Tensor

	// Discrete devices.
	inputAt  []alloc.Ptr // where graph input i is copied in; 0 when no kernel reads it
	hostVals []hostValue // host-computed values to copy in when the program becomes resident
	outputAt []alloc.Ptr // where graph output i is copied out from

	outputs []kernels.Tensor // the graph outputs, in the model's order; held ones carry only Addr
	held    map[int]int      // the runtime's values held in state buffers, by Value.ID

	graph *alloc.Graph // the kernels captured at the first run (RuntimeOptions.Graphs); nil before
	sig   planner.Signature
}

// hostValue is a value computed on the host at bind time that a discrete device's kernel reads.
type hostValue struct {
	at   alloc.Ptr
	data []byte
}

type progStep struct {
	node   *graph.Node
	inst   kernels.Instance
	in     []kernels.Tensor
	out    []kernels.Tensor
	ws     *alloc.Workspace // carved from the arena; nil without workspace or when dynamic
	recipe alloc.Recipe     // R's recipe, for dynamic allocation under the fallback policy
	// dynamic: R > C and the fallback policy: allocate R for each invocation.
	dynamic bool
	size    int64 // R
}

// source says where a value's bytes are at run time.
type source struct {
	data  []byte    // host bytes: a weight or a host value (host-visible backends)
	at    alloc.Ptr // device address: an arena buffer, or a resident weight
	input int       // index in Model.Inputs when the value is (a view of) a graph input kept on the host
}

// compile binds a pattern's plan to the session's arena.
func (s *Session) compile(p *Planned) (*program, error) {
	rt := s.rt
	m := rt.Model
	be := rt.Backend
	hostVisible := rt.opts.Target.HostVisible()
	if p.Plan.Peak > s.arena.Size() {
		// The pattern's plan was made without a capacity; place it inside the reservation.
		prob := p.Lifetimes.Problem
		prob.Capacity = s.arena.Size()
		plan, err := solve(context.Background(), prob, rt.opts.Options)
		if err != nil {
			return nil, fmt.Errorf("pattern %s needs %s of arena, more than the %s reserved for the envelope %s: %w",
				Binding(p.Binding.Dims), bytesize.Format(p.Plan.Peak), bytesize.Format(s.arena.Size()), rt.opts.Envelope, err)
		}
		q := *p
		q.Plan = plan
		p = &q
	}
	src := make([]source, len(m.Values))
	resolved := make([]bool, len(m.Values))
	// resolve turns where v's bytes are under p (locate, resident.go) into addresses in this
	// session's arena and state buffers, or host bytes on a host-visible backend.
	resolve := func(v *graph.Value) (source, error) {
		if resolved[v.ID] {
			return src[v.ID], nil
		}
		sr := source{input: -1}
		size := p.Binding.Size(v)
		pl := rt.locate(p, v)
		switch pl.kind {
		case inState:
			buf := rt.opts.State[pl.index]
			if size := p.Binding.Size(pl.root); size > buf.Bytes {
				return sr, &StateError{Buffer: buf.Name, Problem: fmt.Sprintf("%q needs %s at %s, more than the buffer's %s",
					pl.root.Name, bytesize.Format(size), Binding(p.Binding.Dims), bytesize.Format(buf.Bytes))}
			}
			sr.at = s.stateMem.Base().Add(rt.stateSlots[buf.Name].offset)
		case inArena:
			sr.at = s.arena.Base().Add(p.Plan.Offsets[pl.index])
		case resident:
			sr.data, sr.at = rt.weights[pl.root.ID].host, rt.weights[pl.root.ID].ptr
		case hostInput:
			sr.input = pl.index
		case hostData:
			h, _ := p.Binding.Host(pl.root)
			sr.data = h.Data
		default:
			return sr, fmt.Errorf("value %q has no bytes in the plan", v.Name)
		}
		if size > 0 {
			if hostVisible && sr.at == 0 && sr.data == nil && sr.input < 0 {
				return sr, fmt.Errorf("value %q has no bytes on this device", v.Name)
			}
			if !hostVisible && sr.at == 0 {
				return sr, &DeviceReadError{Value: v, Root: pl.root, Device: be.Name()}
			}
		}
		src[v.ID], resolved[v.ID] = sr, true
		return sr, nil
	}

	prog := &program{planned: p, inputs: make([][]*kernels.Tensor, len(m.Inputs)), held: rt.stateOf}
	// tensor binds v; for a graph input kept on the host it returns the input's index.
	tensor := func(v *graph.Value) (kernels.Tensor, int, error) {
		if v == nil {
			return kernels.Tensor{}, -1, nil
		}
		sr, err := resolve(v)
		if err != nil {
			return kernels.Tensor{}, -1, err
		}
		t := kernels.Tensor{DType: v.DType, Shape: p.Binding.Shape(v)}
		switch {
		case sr.input >= 0:
			return t, sr.input, nil
		case sr.at != 0 && (!hostVisible || sr.data == nil):
			be.Bind(&t, sr.at, p.Binding.Size(v))
		default:
			t.Data = sr.data
		}
		return t, -1, nil
	}
	for _, n := range p.Lifetimes.Steps {
		if st := p.Steps[n.Index]; st.Kind == RunKernel {
			prog.steps = append(prog.steps, progStep{node: st.Node, inst: st.Instance,
				in: make([]kernels.Tensor, len(st.Node.Inputs)), out: make([]kernels.Tensor, len(st.Node.Outputs))})
		}
	}
	k := 0
	for _, n := range p.Lifetimes.Steps {
		st := p.Steps[n.Index]
		if st.Kind != RunKernel {
			continue
		}
		ps := &prog.steps[k]
		k++
		for i, v := range st.Node.Inputs {
			t, in, err := tensor(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", st.Node, err)
			}
			ps.in[i] = t
			if in >= 0 {
				prog.inputs[in] = append(prog.inputs[in], &ps.in[i])
			}
		}
		for i, v := range st.Node.Outputs {
			t, _, err := tensor(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", st.Node, err)
			}
			ps.out[i] = t
		}
		if err := s.bindWorkspace(p, st, ps); err != nil {
			return nil, err
		}
	}
	prog.outputs = make([]kernels.Tensor, len(m.Outputs))
	if hostVisible {
		for i, v := range m.Outputs {
			t, in, err := tensor(v)
			if err != nil {
				return nil, fmt.Errorf("output %q: %w", v.Name, err)
			}
			prog.outputs[i] = t
			if in >= 0 {
				prog.inputs[in] = append(prog.inputs[in], &prog.outputs[i])
			}
		}
	} else if err := s.stage(prog, resolve); err != nil {
		return nil, err
	}
	if _, ok := be.(kernels.Launcher); ok {
		prog.launch = make([]func(), len(prog.steps))
		for i := range prog.steps {
			ps := &prog.steps[i]
			prog.launch[i] = func() {
				if s.err != nil {
					return // an earlier kernel failed: skip the rest of the run
				}
				if err := ps.inst.Run(ps.in, ps.out, ps.ws, s.stream); err != nil {
					s.err = fmt.Errorf("%s (%s): %w", ps.node, ps.inst.Tactic(), err)
				}
			}
		}
	}
	return prog, nil
}

// stage lays out a discrete device's copies: where graph inputs go, which host values the arena
// must hold, and the host buffers the outputs are copied out to.
func (s *Session) stage(prog *program, resolve func(*graph.Value) (source, error)) error {
	m, p := s.rt.Model, prog.planned
	prog.inputAt = make([]alloc.Ptr, len(m.Inputs))
	for i, v := range m.Inputs {
		if b, ok := p.Lifetimes.Buffer(v); ok {
			prog.inputAt[i] = s.arena.Base().Add(p.Plan.Offsets[b])
		}
	}
	for i, o := range p.Lifetimes.Owners {
		if len(o.Values) == 0 || !o.Values[0].Host || o.Values[0].Kind != graph.KindActivation {
			continue
		}
		h, _ := p.Binding.Host(o.Values[0])
		if len(h.Data) > 0 {
			prog.hostVals = append(prog.hostVals, hostValue{at: s.arena.Base().Add(p.Plan.Offsets[i]), data: h.Data})
		}
	}
	prog.outputAt = make([]alloc.Ptr, len(m.Outputs))
	for i, v := range m.Outputs {
		sr, err := resolve(v)
		if err != nil {
			return fmt.Errorf("output %q: %w", v.Name, err)
		}
		prog.outputAt[i] = sr.at
		prog.outputs[i] = kernels.Tensor{DType: v.DType, Shape: p.Binding.Shape(v)}
		if _, held := s.rt.stateOf[v.ID]; held || slices.Contains(s.rt.opts.DeviceOutputs, v.Name) {
			prog.outputs[i].Addr = sr.at // it stays in its state buffer or the arena: nothing is copied out
			continue
		}
		prog.outputs[i].Data = make([]byte, p.Binding.Size(v))
	}
	return nil
}

// bindWorkspace applies the W/C/R policy to one kernel: R is the size of the Recipe the kernel
// asks for now, C the bytes its pattern's plan holds for it, W its bound over the envelope.
// R <= C: the planned region is carved once. R > C: the strict policy fails here, before the
// pattern runs; the fallback policy allocates all of R for each invocation (never a planned part
// and a dynamic part for one kernel). R > W is always an error: the kernel's bound is wrong.
func (s *Session) bindWorkspace(p *Planned, st Step, ps *progStep) error {
	recipe := st.Instance.Recipe()
	r, err := recipe.Size()
	if err != nil {
		return fmt.Errorf("%s: %w", st.Node, err)
	}
	ps.recipe, ps.size = recipe, r
	if r == 0 {
		return nil
	}
	var c int64
	if st.WorkspaceBuffer >= 0 {
		c = p.Lifetimes.Problem.Buffers[st.WorkspaceBuffer].Size
	}
	d, err := s.rt.opts.Policy.Decide(st.Node.Name, r, c, s.rt.Reserve.bound(st.Node))
	if err != nil {
		return err
	}
	if d.Source == planner.FromDynamic {
		ps.dynamic = true
		return nil
	}
	ws, err := s.arena.Carve(p.Plan.Offsets[st.WorkspaceBuffer], recipe)
	if err != nil {
		return fmt.Errorf("%s: %w", st.Node, err)
	}
	ps.ws = ws
	return nil
}

// bound returns n's workspace bound W over the envelope.
func (ep *EnvelopePlan) bound(n *graph.Node) int64 {
	for _, b := range ep.Bounds {
		if b.Node == n {
			return b.Bound.Bytes
		}
	}
	return 0
}

// run is Run (in lost.go) on a runtime whose device is not lost.
func (s *Session) run(ctx context.Context, inputs map[string]kernels.Tensor) ([]kernels.Tensor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("engine: session is closed")
	}
	rt := s.rt
	prog := s.last
	if prog == nil || !prog.matches(rt.Model, inputs) {
		var err error
		if prog, err = s.program(ctx, inputs); err != nil {
			return nil, err
		}
		s.last = prog
	}
	if rt.opts.Target.HostVisible() {
		for i, v := range rt.Model.Inputs {
			data := inputs[v.Name].Data
			for _, t := range prog.inputs[i] {
				t.Data = data
			}
		}
	} else if err := s.copyIn(prog, inputs); err != nil {
		return nil, err
	}
	if s.prof != nil {
		return prog.outputs, s.profile(prog) // eager, each kernel timed (profile.go)
	}
	if rt.opts.Graphs {
		return prog.outputs, s.replay(prog)
	}
	return prog.outputs, s.execute(prog)
}

// copyIn queues the copies of a run's graph inputs, and of the program's host values when the
// arena last held another program's.
func (s *Session) copyIn(prog *program, inputs map[string]kernels.Tensor) error {
	be := s.rt.Backend
	for i, v := range s.rt.Model.Inputs {
		if at := prog.inputAt[i]; at != 0 && len(inputs[v.Name].Data) > 0 {
			if err := be.CopyIn(at, inputs[v.Name].Data, s.stream); err != nil {
				return s.abandon(fmt.Errorf("input %q: %w", v.Name, err))
			}
		}
	}
	if s.resident != prog {
		s.resident = nil
		for _, hv := range prog.hostVals {
			if err := be.CopyIn(hv.at, hv.data, s.stream); err != nil {
				return s.abandon(fmt.Errorf("host-computed values: %w", err))
			}
		}
		s.resident = prog
	}
	return nil
}

// abandon waits for the work already queued (its host slices must outlive it) and returns err.
func (s *Session) abandon(err error) error {
	s.resident = nil
	s.rt.Backend.Device().SynchronizeStream(s.stream)
	return err
}

// matches reports whether inputs have exactly the dtypes, shapes and byte counts of prog's
// pattern: then they bind to the same dims, and a run can skip binding (a run of the same
// pattern as the last one allocates nothing, on the device or the Go heap).
func (prog *program) matches(m *graph.Model, inputs map[string]kernels.Tensor) bool {
	if len(inputs) != len(m.Inputs) {
		return false
	}
	b := prog.planned.Binding
	for _, v := range m.Inputs {
		t, ok := inputs[v.Name]
		size := b.Size(v)
		if _, held := prog.held[v.ID]; held {
			size = 0 // a held input's caller passes its shape only
		}
		if !ok || t.DType != v.DType || int64(len(t.Data)) != size || !slices.Equal(t.Shape, b.Shape(v)) {
			return false
		}
	}
	return true
}

// program returns the session's program for the inputs' pattern, planning and binding it on
// first use.
func (s *Session) program(ctx context.Context, inputs map[string]kernels.Tensor) (*program, error) {
	rt := s.rt
	for _, p := range s.known {
		if p.matches(rt.Model, inputs) {
			if prog, ok := s.programs.Get(p.sig); ok {
				return prog, nil
			}
		}
	}
	dims, err := rt.Bind(inputs)
	if err != nil {
		return nil, err
	}
	sig := signature(dims)
	if prog, ok := s.programs.Get(sig); ok {
		return prog, nil
	}
	p, err := rt.pattern(ctx, dims)
	if err != nil {
		return nil, err
	}
	prog, err := s.compile(p)
	if err != nil {
		return nil, err
	}
	prog.sig = sig
	s.known = append(s.known, prog)
	for _, old := range s.programs.Put(sig, prog) {
		s.known = slices.DeleteFunc(s.known, func(p *program) bool { return p == old })
		if err := s.dropGraph(old); err != nil {
			return nil, err
		}
	}
	return prog, nil
}

// dropGraph releases prog's graph, if it has one; a later run of prog captures it again.
func (s *Session) dropGraph(prog *program) error {
	if prog.graph == nil {
		return nil
	}
	g := prog.graph
	prog.graph = nil
	delete(s.captured, prog)
	return g.Release()
}

// replay runs prog as a graph: captured at its first run (nothing runs during the capture),
// then launched; the outputs are copied out after it.
func (s *Session) replay(prog *program) error {
	rt := s.rt
	if prog.graph == nil {
		if err := rt.Alloc.BeginCapture(s.stream, nil); err != nil {
			return s.abandon(fmt.Errorf("capturing a graph: %w", err))
		}
		err := s.launch(prog)
		g, endErr := rt.Alloc.EndCapture(s.stream)
		if err == nil && endErr != nil {
			err = fmt.Errorf("capturing a graph: %w", endErr)
		}
		if err != nil {
			if g != nil {
				err = errors.Join(err, g.Release())
			}
			return s.abandon(err)
		}
		prog.graph = g
		s.captured[prog] = true
		rt.captures.Add(1)
	}
	s.err = nil
	if err := prog.graph.Launch(s.stream); err != nil {
		return s.abandon(fmt.Errorf("replaying a graph: %w", err))
	}
	rt.replays.Add(1)
	return s.finish(prog)
}

// execute launches every kernel of prog on the session's stream, queues the outputs' copies on a
// discrete device, and waits for all of it.
func (s *Session) execute(prog *program) error {
	s.err = nil
	if err := s.launch(prog); err != nil {
		return err
	}
	return s.finish(prog)
}

// launch queues every kernel of prog on the session's stream (or into the capture underway).
func (s *Session) launch(prog *program) error {
	// No type assertion to an interface here: the runtime adds one's result to the call site's
	// cache at random, about once in a thousand misses, and building the cache allocates.
	launcher, host := s.rt.launcher, s.rt.launcher != nil
	for i := range prog.steps {
		if err := s.launchStep(prog, i, launcher, host); err != nil {
			return err
		}
	}
	return nil
}

// launchStep queues prog's kernel i; on error the stream is abandoned.
func (s *Session) launchStep(prog *program, i int, launcher kernels.Launcher, host bool) error {
	ps := &prog.steps[i]
	if ps.dynamic {
		if err := s.runDynamic(ps, launcher, host); err != nil {
			return s.abandon(err)
		}
		return nil
	}
	var err error
	if host {
		err = launcher.Launch(s.stream, prog.launch[i])
	} else {
		err = ps.inst.Run(ps.in, ps.out, ps.ws, s.stream)
	}
	if err != nil {
		return s.abandon(&KernelError{Node: ps.node, Err: err})
	}
	return nil
}

// finish queues the outputs' copies on a discrete device and waits for the stream.
func (s *Session) finish(prog *program) error {
	rt := s.rt
	for i, at := range prog.outputAt {
		if len(prog.outputs[i].Data) == 0 {
			continue
		}
		if err := rt.Backend.CopyOut(prog.outputs[i].Data, at, s.stream); err != nil {
			return s.abandon(fmt.Errorf("output %q: %w", rt.Model.Outputs[i].Name, err))
		}
	}
	if err := rt.Backend.Device().SynchronizeStream(s.stream); err != nil {
		s.resident = nil
		return err
	}
	return s.err
}

// runDynamic runs a kernel whose workspace the fallback policy allocates for this invocation
// alone: all of R at once from the caching allocator, returned stream-ordered after the kernel.
func (s *Session) runDynamic(ps *progStep, launcher kernels.Launcher, host bool) error {
	rt := s.rt
	sc, ws, err := rt.Alloc.ScratchFor(s.stream, ps.recipe)
	if err != nil {
		return fmt.Errorf("%s: dynamic workspace of %s (fallback policy): %w", ps.node, bytesize.Format(ps.size), err)
	}
	rt.dynamicAllocs.Add(1)
	rt.dynamicBytes.Add(ps.size)
	if host {
		err = launcher.Launch(s.stream, func() {
			if s.err != nil {
				return
			}
			if err := ps.inst.Run(ps.in, ps.out, ws, s.stream); err != nil {
				s.err = fmt.Errorf("%s (%s): %w", ps.node, ps.inst.Tactic(), err)
			}
		})
	} else {
		err = ps.inst.Run(ps.in, ps.out, ws, s.stream)
	}
	if rerr := sc.Release(); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", ps.node, err)
	}
	return nil
}

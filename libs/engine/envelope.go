package engine

import (
	"context"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Candidate is one binding of an envelope that was planned, with its arena size.
type Candidate struct {
	Binding    Binding
	ArenaBytes int64 // the plan's peak: activations and workspaces
	LowerBound int64
	Why        string // "corner", or the tactic switch the binding sits at
}

// NodeBound is one node's workspace bound W over an envelope.
type NodeBound struct {
	Node  *graph.Node
	Bound kernels.Bound
}

// EnvelopePlan is a model planned over an envelope of bindings: the Level-1 estimate and the
// Level-2 reservation are both read from it.
type EnvelopePlan struct {
	Envelope Envelope
	// Worst is the plan of the binding with the largest arena; its peak is ArenaBytes.
	Worst *Planned
	// ArenaBytes is what the runner reserves for the envelope: the largest arena over the
	// candidates.
	ArenaBytes int64
	// Candidates are the bindings that were planned: every corner of the envelope, and the
	// bindings on either side of each point where a kernel switches tactic.
	Candidates []Candidate
	// Bounds are the nodes' workspace bounds W over the envelope, largest first; nodes
	// without workspace are left out.
	Bounds []NodeBound
	// WeightBytes is the size of the model's weights.
	WeightBytes int64
	// DeviceWeightBytes is what the weights take in a discrete device's memory: the weights and
	// the Constant outputs that kernels read (resident.go), each at an aligned offset, in one
	// reservation (alloc.ReservedSize); 0 on a host-visible target, where they stay in host memory.
	DeviceWeightBytes int64
	// DrivingDim is the dim whose lowering to its minimum shrinks the arena most ("" for a
	// single binding), and DrivingSavings how many bytes that saves.
	DrivingDim     string
	DrivingSavings int64
}

// WorkspaceBound is the sum of the nodes' W: what reserving every node's worst-case workspace
// separately would take.
func (e *EnvelopePlan) WorkspaceBound() int64 {
	var s int64
	for _, b := range e.Bounds {
		s += b.Bound.Bytes
	}
	return s
}

// TotalBytes is the weights plus the arena: on a discrete target, the device memory one session
// needs.
func (e *EnvelopePlan) TotalBytes() int64 { return e.weightsOnTarget() + e.ArenaBytes }

// weightsOnTarget is the weights' bytes where the target holds them.
func (e *EnvelopePlan) weightsOnTarget() int64 {
	if e.DeviceWeightBytes > 0 {
		return e.DeviceWeightBytes
	}
	return e.WeightBytes
}

// checkEnvelope makes sure env gives every dim of m a closed range and names no other dim.
func checkEnvelope(m *graph.Model, env Envelope) error {
	known := map[string]bool{}
	for _, d := range m.DimNames {
		known[d] = true
	}
	for _, n := range env.Names() {
		if !known[n] {
			return &EnvelopeError{Problem: UnknownDim, Dims: []string{n}, Known: m.DimNames}
		}
		if env[n].Open {
			return &EnvelopeError{Problem: OpenDim, Dims: []string{n}, Known: m.DimNames}
		}
	}
	var missing []string
	for _, d := range m.DimNames {
		if _, ok := env[d]; !ok {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		return &EnvelopeError{Problem: MissingDims, Dims: missing, Known: m.DimNames}
	}
	return nil
}

// maxCorners bounds the corners of an envelope (2^dims) that are planned.
const maxCorners = 64

// PlanEnvelope plans m over every binding in env that can be the worst: the corners, and the
// bindings on both sides of every tactic switch found along each dim (sizes are not monotone
// where a kernel changes tactic). The worst candidate's plan is what the runner reserves.
func PlanEnvelope(ctx context.Context, m *graph.Model, env Envelope, opts Options) (*EnvelopePlan, error) {
	if err := checkEnvelope(m, env); err != nil {
		return nil, err
	}
	opts, err := opts.normalized()
	if err != nil {
		return nil, err
	}
	if err := checkKernels(m, opts); err != nil {
		return nil, err
	}
	ep := &EnvelopePlan{Envelope: env}
	if ep.WeightBytes, err = WeightBytes(m); err != nil {
		return nil, err
	}
	if !opts.Target.HostVisible() {
		_, size, err := deviceWeightLayout(m)
		if err != nil {
			return nil, err
		}
		if size > 0 {
			ep.DeviceWeightBytes = alloc.ReservedSize(size)
		}
	}
	names := env.Names()
	varying := names[:0:0]
	for _, n := range names {
		if !env[n].Fixed() {
			varying = append(varying, n)
		}
	}
	if len(varying) > bits.Len(maxCorners)-1 {
		return nil, &EnvelopeError{Problem: TooManyVarying, Varying: len(varying), MaxVarying: bits.Len(maxCorners) - 1}
	}

	cands := map[string]Candidate{}
	add := func(b Binding, why string) {
		if _, ok := cands[b.String()]; !ok {
			cands[b.String()] = Candidate{Binding: b, Why: why}
		}
	}
	hi := Binding{}
	for _, n := range names {
		hi[n] = env[n].Hi
	}
	for mask := 0; mask < 1<<len(varying); mask++ {
		b := Binding{}
		for _, n := range names {
			b[n] = env[n].Hi
		}
		for i, n := range varying {
			if mask&(1<<i) == 0 {
				b[n] = env[n].Lo
			}
		}
		add(b, "corner")
	}
	// Tactic switches along each varying dim, the other dims at their maximum.
	for _, n := range varying {
		sw, err := tacticSwitches(m, hi, n, env[n], opts)
		if err != nil {
			return nil, err
		}
		for _, s := range sw {
			for _, v := range []int64{s.at - 1, s.at} {
				b := cloneBinding(hi)
				b[n] = v
				add(b, s.why)
			}
		}
	}

	keys := make([]string, 0, len(cands))
	for k := range cands {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var planned []*Planned
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := cands[k]
		p, err := Plan(ctx, m, c.Binding, opts)
		if err != nil {
			return nil, err
		}
		c.ArenaBytes, c.LowerBound = p.Plan.Peak, p.Plan.LowerBound
		ep.Candidates = append(ep.Candidates, c)
		planned = append(planned, p)
		if ep.Worst == nil || p.Plan.Peak > ep.ArenaBytes {
			ep.Worst, ep.ArenaBytes = p, p.Plan.Peak
		}
	}
	if ep.Bounds, err = nodeBounds(m, planned, opts); err != nil {
		return nil, err
	}
	ep.DrivingDim, ep.DrivingSavings = drivingDim(ep, varying)
	return ep, nil
}

// drivingDim finds the dim whose minimum, the others as in the worst binding, gives the
// smallest arena among the candidates.
func drivingDim(ep *EnvelopePlan, varying []string) (string, int64) {
	var best string
	var saving int64
	worst := ep.Worst.Binding.Dims
	for _, n := range varying {
		for _, c := range ep.Candidates {
			if c.Binding[n] != ep.Envelope[n].Lo || !sameExcept(c.Binding, worst, n) {
				continue
			}
			if s := ep.ArenaBytes - c.ArenaBytes; s > saving {
				best, saving = n, s
			}
		}
	}
	return best, saving
}

func sameExcept(b Binding, dims map[string]int64, skip string) bool {
	for n, v := range b {
		if n != skip && dims[n] != v {
			return false
		}
	}
	return true
}

func cloneBinding(b Binding) Binding {
	c := make(Binding, len(b))
	for k, v := range b {
		c[k] = v
	}
	return c
}

// tacticSwitch is the smallest value of a dim at which some node's tactic differs from the
// value below it.
type tacticSwitch struct {
	at  int64
	why string
}

// tacticSwitches walks dim over r (the other dims as in at) and returns where the tactic
// signature changes: probes at powers of two, then bisection between probes that differ.
func tacticSwitches(m *graph.Model, at Binding, dim string, r Range, opts Options) ([]tacticSwitch, error) {
	static := staticKeys(m)
	sig := func(v int64) (string, error) {
		b := cloneBinding(at)
		b[dim] = v
		return tacticSignature(m, b, opts, static)
	}
	probes := []int64{r.Lo}
	for p := int64(1); p < r.Hi; p <<= 1 {
		if p > r.Lo {
			probes = append(probes, p)
		}
	}
	probes = append(probes, r.Hi)
	var out []tacticSwitch
	prev, err := sig(probes[0])
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(probes); i++ {
		cur, err := sig(probes[i])
		if err != nil {
			return nil, err
		}
		if cur != prev {
			// Bisect (probes[i-1], probes[i]] for the first value with a new signature.
			lo, hi := probes[i-1], probes[i]
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				s, err := sig(mid)
				if err != nil {
					return nil, err
				}
				if s == prev {
					lo = mid
				} else {
					hi = mid
				}
			}
			out = append(out, tacticSwitch{at: hi, why: fmt.Sprintf("tactic switch at %s=%d", dim, hi)})
		}
		prev = cur
	}
	return out, nil
}

// tacticSignature binds m and selects every kernel, returning the tactics in node order. A
// selection depends on the node's op, attributes, inputs and outputs, not on its name, so the
// nodes a decoder repeats in every layer are selected once per binding: static holds each
// node's op, attributes and weights (staticKeys), to which the binding adds the shapes.
func tacticSignature(m *graph.Model, dims Binding, opts Options, static []string) (string, error) {
	b, err := graph.Bind(m, dims)
	if err != nil {
		return "", &PlanError{Binding: dims, Err: err}
	}
	var sb strings.Builder
	seen := map[string]string{}
	for _, n := range m.Nodes {
		if stepKind(n) != RunKernel {
			continue
		}
		kn := KernelNode(b, n)
		key := selectionKey(static[n.Index], kn)
		tactic, ok := seen[key]
		if !ok || key == "" {
			inst, err := opts.Registry.Select(kn, opts.Target)
			if err != nil {
				return "", &PlanError{Node: n, Binding: dims, Err: err}
			}
			tactic = inst.Tactic()
			seen[key] = tactic
		}
		sb.WriteString(tactic)
		sb.WriteByte(';')
	}
	return sb.String(), nil
}

// staticKeys is, for each node of m, what a kernel's selection reads of it that no binding
// changes: its op, opset and attributes, and the weights it reads (small ones by content, as
// kernels.Value.Const shows them; two layers' weights of one shape differ in name only). "" for
// a node whose weight's bytes cannot be read: such a node is never shared.
func staticKeys(m *graph.Model) []string {
	keys := make([]string, len(m.Nodes))
	for i, n := range m.Nodes {
		var sb strings.Builder
		fmt.Fprintf(&sb, "%s|%s|%d|%v|", n.Domain, n.OpType, m.Opsets[n.Domain], n.Attrs)
		for _, v := range n.Inputs {
			if v == nil || v.Kind != graph.KindInitializer {
				sb.WriteString("-;")
				continue
			}
			if v.Init.ShapeOnly() || v.Init.Size > kernels.MaxConstBytes {
				// A kernel sees no bytes of it (kernels.Value.Const), only its type and shape.
				fmt.Fprintf(&sb, "w%d%v;", v.DType, v.Shape)
				continue
			}
			data, err := v.Init.Bytes()
			if err != nil {
				sb.Reset()
				break
			}
			fmt.Fprintf(&sb, "c%d%v%x;", v.DType, v.Shape, data)
		}
		keys[i] = sb.String()
	}
	return keys
}

// selectionKey is what a kernel's selection reads of n, whose static key is static: with its
// inputs' and outputs' types and shapes at the binding, and the host values it reads; "" when
// the node is not to be shared.
func selectionKey(static string, n *kernels.Node) string {
	if static == "" {
		return ""
	}
	buf := []byte(static)
	for _, vs := range [][]kernels.Value{n.Inputs, n.Outputs} {
		buf = append(buf, '|')
		for _, v := range vs {
			buf = strconv.AppendInt(buf, int64(v.DType), 10)
			for _, d := range v.Shape {
				buf = append(buf, ',')
				buf = strconv.AppendInt(buf, d, 10)
			}
			if v.Const != nil && !v.Initializer {
				buf = append(buf, '=')
				buf = append(buf, v.Const...)
			}
			buf = append(buf, ';')
		}
	}
	return string(buf)
}

// nodeBounds asks every kernel for W over the ranges of its inputs and outputs seen across
// the planned candidates (the corners hold every dim's extremes).
func nodeBounds(m *graph.Model, planned []*Planned, opts Options) ([]NodeBound, error) {
	var out []NodeBound
	for _, n := range m.Nodes {
		if stepKind(n) != RunKernel {
			continue
		}
		nr := &kernels.NodeRange{Name: n.Name, Op: n.OpType, Domain: n.Domain, Opset: m.Opsets[n.Domain], Attrs: n.Attrs}
		nr.Inputs = valueRanges(n.Inputs, planned)
		nr.Outputs = valueRanges(n.Outputs, planned)
		b, err := opts.Registry.Bound(nr, opts.Target)
		if err != nil {
			return nil, &PlanError{Node: n, Err: err}
		}
		// W can never be below an R that was seen: a kernel whose Bound is lower is wrong.
		for _, p := range planned {
			if r := p.Steps[n.Index].Workspace; r > b.Bytes {
				return nil, &PlanError{Node: n, Binding: Binding(p.Binding.Dims), Err: fmt.Errorf(
					"kernel bug: workspace R=%d exceeds its declared bound W=%d", r, b.Bytes)}
			}
		}
		if b.Bytes > 0 {
			out = append(out, NodeBound{Node: n, Bound: b})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Bound.Bytes > out[j].Bound.Bytes })
	return out, nil
}

func valueRanges(vs []*graph.Value, planned []*Planned) []kernels.ValueRange {
	out := make([]kernels.ValueRange, len(vs))
	for i, v := range vs {
		if v == nil {
			continue
		}
		vr := kernels.ValueRange{DType: v.DType}
		for k, p := range planned {
			shape := p.Binding.Shape(v)
			if k == 0 {
				vr.Dims = make([]kernels.DimRange, len(shape))
				for d, x := range shape {
					vr.Dims[d] = kernels.DimRange{Lo: x, Hi: x}
				}
				continue
			}
			for d, x := range shape {
				if d < len(vr.Dims) {
					vr.Dims[d].Lo = min(vr.Dims[d].Lo, x)
					vr.Dims[d].Hi = max(vr.Dims[d].Hi, x)
				}
			}
		}
		out[i] = vr
	}
	return out
}

// WeightBytes is the total size of m's weights (initializers), whether or not their bytes are
// present.
func WeightBytes(m *graph.Model) (int64, error) {
	var s int64
	for _, v := range m.Initializers {
		if s+v.Init.Size < s {
			return 0, fmt.Errorf("the sizes of the weights overflow int64")
		}
		s += v.Init.Size
	}
	return s, nil
}

// Package generate runs autoregressive generation (LLM decoding) over an engine runtime, with
// the model's KV cache held in state buffers that outlive runs.
//
// It recognises the two conventions exported decoders use for their cache (Recognize):
//   - the concat form (transformers/optimum): past_key_values.{i}.key|value inputs
//     [batch, kv_heads, past, head_dim] and present.{i}.key|value outputs one position longer,
//     which the model makes by concatenation;
//   - the shared-buffer form (onnxruntime GenAI): com.microsoft.GroupQueryAttention with past and
//     present one buffer of the maximum context, written in place at the position seqlens_k
//     (derived in the graph from attention_mask) says.
//
// Shapes are bucketed so that after warm-up a generation plans and compiles nothing: a prompt
// is right-padded to its bucket (masked), and the past (concat form) or the attention mask
// (shared-buffer form) to the bucket of the current length; each bucket is one shape pattern,
// planned and bound once per session. Buckets are powers of two from 16, capped at the context.
//
// What each step moves (concat form): the model itself copies the past into the present (it is a
// Concat); afterwards the generator copies the one new position from the present buffer into the
// past buffer, on the device (Session.CopyRows). When the past outgrows its bucket, the valid
// positions are laid out again for the next bucket: once per bucket, through the present buffer.
// The past buffer keeps one masked position at its start, because carve binds no zero-size dim
// and a prompt needs a past of at least one position. In the shared-buffer form nothing is
// copied: the kernel writes the new position in place.
//
// What leaves the device each step: the model Prepare returns also computes each position's
// greedy choice (Cache.Greedy, an ArgMax of the logits), so a greedy generation reads one token
// id per sequence; logits rows are read only when Config.Logits asks for them or another sampler
// needs them (Generator.take).
//
// Continuous batching (Batch, shared-buffer form only): one session's cache holds a row for each
// of a fixed number of slots, reserved at load; sequences join free slots and leave between
// steps, each step decodes every running sequence together in one call and feeds a chunk of a
// joining prompt in a row of its own (batch.go says how and what it keeps invariant). A Generator runs one batch of sequences from start to end.
package generate

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"carve.dev/libs/graph"
)

// Form is a KV-cache convention.
type Form uint8

const (
	// Concat is the transformers/optimum convention: the present is the past plus the new
	// positions, a new tensor each step.
	Concat Form = iota + 1
	// SharedBuffer is onnxruntime GenAI's: GroupQueryAttention writes the new positions into one
	// buffer of the maximum context that is both the past and the present.
	SharedBuffer
)

func (f Form) String() string {
	switch f {
	case Concat:
		return "concat"
	case SharedBuffer:
		return "shared-buffer"
	}
	return fmt.Sprintf("Form(%d)", uint8(f))
}

// Names override the names Recognize looks for. Per-layer names contain one %d (the layer);
// an empty field means the convention's default.
type Names struct {
	InputIDs     string // default "input_ids"
	Mask         string // default "attention_mask"
	Positions    string // default "position_ids" (optional in the shared-buffer form)
	Logits       string // default "logits"
	PastKey      string // default "past_key_values.%d.key"
	PastValue    string // default "past_key_values.%d.value"
	PresentKey   string // default "present.%d.key"
	PresentValue string // default "present.%d.value"
}

func (n Names) withDefaults() Names {
	for _, f := range NameFields {
		if s := f.Field(&n); *s == "" {
			*s = f.Default
		}
	}
	return n
}

// NameField is one of Names' fields: Key says in a word or two what it names (a caller that
// lets people override the names builds its option's name from it), Default is the
// convention's name and Field selects the field.
type NameField struct {
	Key, Default string
	Field        func(*Names) *string
}

// NameFields are Names' fields, in order.
var NameFields = []NameField{
	{"input-ids", "input_ids", func(n *Names) *string { return &n.InputIDs }},
	{"mask", "attention_mask", func(n *Names) *string { return &n.Mask }},
	{"position-ids", "position_ids", func(n *Names) *string { return &n.Positions }},
	{"logits", "logits", func(n *Names) *string { return &n.Logits }},
	{"past-key", "past_key_values.%d.key", func(n *Names) *string { return &n.PastKey }},
	{"past-value", "past_key_values.%d.value", func(n *Names) *string { return &n.PastValue }},
	{"present-key", "present.%d.key", func(n *Names) *string { return &n.PresentKey }},
	{"present-value", "present.%d.value", func(n *Names) *string { return &n.PresentValue }},
}

// PerLayer reports whether the field names a value of each layer, with one %d for the layer.
func (f NameField) PerLayer() bool { return strings.Contains(f.Default, "%d") }

// Valid reports whether v can be the field's name: not empty, with exactly one %d and no other
// % in a per-layer name (the layer's number replaces the %d, and only it), and no % in another.
func (f NameField) Valid(v string) bool {
	if f.PerLayer() {
		return strings.Count(v, "%d") == 1 && strings.Count(v, "%") == 1
	}
	return v != "" && !strings.Contains(v, "%")
}

// Layer names one layer's cache values.
type Layer struct {
	PastKey, PastValue, PresentKey, PresentValue string
}

// Cache is a model's KV cache as Recognize found it.
type Cache struct {
	Form    Form
	Layers  []Layer
	KVHeads int64
	HeadDim int64
	DType   graph.DType

	InputIDs, Mask, Positions, Logits string // Positions is "" when the model has none
	Vocab                             int64
	// Greedy is the output Prepare adds: each position's most likely token id, the ArgMax of
	// Logits over the vocabulary ([batch, seq], int64), so that a greedy step reads batch ids
	// instead of batch rows of logits. "" for a Cache that Prepare has not seen.
	Greedy string

	// Dims the generator binds: the batch and the new positions (input_ids' dims), the past's
	// length (the concat form's past dim; the shared-buffer form's maximum context), and the
	// mask's length when it is a dim of its own (the shared-buffer form; in the concat form
	// until Tie replaces it).
	BatchDim, SeqDim, PastDim, MaskDim string
}

// RecognitionError reports a model whose cache convention Recognize does not find.
type RecognitionError struct {
	Problem string
}

func (e *RecognitionError) Error() string {
	return "generate: the model has no recognisable KV cache: " + e.Problem
}

// Recognize finds m's KV cache: the inputs and outputs names gives (or the conventions'
// defaults), and the form by whether GroupQueryAttention reads the past.
func Recognize(m *graph.Model, names Names) (*Cache, error) {
	n := names.withDefaults()
	c := &Cache{InputIDs: n.InputIDs, Mask: n.Mask, Logits: n.Logits}
	bad := func(format string, args ...any) (*Cache, error) {
		return nil, &RecognitionError{Problem: fmt.Sprintf(format, args...)}
	}
	input := func(name string) *graph.Value {
		if v := m.Value(name); v != nil && v.Kind == graph.KindInput {
			return v
		}
		return nil
	}
	output := func(name string) *graph.Value {
		if v := m.Value(name); v != nil && v.Output {
			return v
		}
		return nil
	}
	ids := input(n.InputIDs)
	if ids == nil || len(ids.Shape) != 2 || !isIndex(ids.DType) {
		return bad("no input %q [batch, seq] of token ids (inputs: %s)", n.InputIDs, valueNames(m.Inputs))
	}
	c.BatchDim, c.SeqDim = symName(ids.Shape[0]), symName(ids.Shape[1])
	if c.BatchDim == "" || c.SeqDim == "" {
		return bad("input %q is %s: want two named dims [batch, seq]", n.InputIDs, ids.Shape)
	}
	mask := input(n.Mask)
	if mask == nil || len(mask.Shape) != 2 || !isIndex(mask.DType) {
		return bad("no input %q [batch, length] (inputs: %s)", n.Mask, valueNames(m.Inputs))
	}
	if pos := input(n.Positions); pos != nil {
		c.Positions = n.Positions
	}
	logits := output(n.Logits)
	if logits == nil || len(logits.Shape) != 3 {
		return bad("no output %q [batch, seq, vocab] (outputs: %s)", n.Logits, valueNames(m.Outputs))
	}
	if v, ok := logits.Shape[2].Value(); ok {
		c.Vocab = v
	} else {
		return bad("output %q has no fixed vocabulary size (%s)", n.Logits, logits.Shape)
	}
	for i := 0; ; i++ {
		l := Layer{PastKey: fmt.Sprintf(n.PastKey, i), PastValue: fmt.Sprintf(n.PastValue, i),
			PresentKey: fmt.Sprintf(n.PresentKey, i), PresentValue: fmt.Sprintf(n.PresentValue, i)}
		pk, pv := input(l.PastKey), input(l.PastValue)
		if pk == nil && pv == nil {
			break
		}
		qk, qv := output(l.PresentKey), output(l.PresentValue)
		if pk == nil || pv == nil || qk == nil || qv == nil {
			return bad("layer %d lacks one of %s, %s (inputs) and %s, %s (outputs)", i, l.PastKey, l.PastValue, l.PresentKey, l.PresentValue)
		}
		for _, v := range []*graph.Value{pk, pv, qk, qv} {
			if len(v.Shape) != 4 {
				return bad("%s: want [batch, kv_heads, length, head_dim]", v)
			}
			h, okH := v.Shape[1].Value()
			d, okD := v.Shape[3].Value()
			if !okH || !okD {
				return bad("%s: kv_heads and head_dim must be fixed", v)
			}
			if c.KVHeads == 0 {
				c.KVHeads, c.HeadDim, c.DType = h, d, v.DType
			}
			if h != c.KVHeads || d != c.HeadDim || v.DType != c.DType {
				return bad("%s differs from layer 0's cache (%d heads x %d, %s)", v, c.KVHeads, c.HeadDim, c.DType)
			}
		}
		past := symName(pk.Shape[2])
		if past == "" {
			return bad("%s: its length must be a named dim", pk)
		}
		if c.PastDim == "" {
			c.PastDim = past
		} else if past != c.PastDim {
			return bad("%s: its length %q differs from layer 0's %q", pk, past, c.PastDim)
		}
		c.Layers = append(c.Layers, l)
	}
	if len(c.Layers) == 0 {
		pat := regexp.MustCompile(`(?i)past|cache|key|value`)
		var seen []string
		for _, v := range m.Inputs {
			if pat.MatchString(v.Name) {
				seen = append(seen, v.Name)
			}
		}
		if len(seen) > 0 {
			return bad("no input %q; inputs that look like a cache: %s (name their pattern to override)", fmt.Sprintf(n.PastKey, 0), strings.Join(seen, ", "))
		}
		return bad("no input %q: the model takes no past keys and values", fmt.Sprintf(n.PastKey, 0))
	}
	c.Form = Concat
	if readByGQA(m.Value(c.Layers[0].PastKey)) {
		c.Form = SharedBuffer
		c.MaskDim = symName(mask.Shape[1])
		if c.MaskDim == "" {
			return bad("input %q is %s: want [batch, total_length] with a named length", n.Mask, mask.Shape)
		}
	} else {
		if c.Positions == "" {
			return bad("the concat form needs an input %q: carve pads the cache, so positions cannot be derived from its length", n.Positions)
		}
		total := graph.Sym(c.PastDim).Add(graph.Sym(c.SeqDim))
		if !mask.Shape[1].Equal(total) {
			if c.MaskDim = symName(mask.Shape[1]); c.MaskDim == "" {
				return bad("input %q is %s: want [batch, %s]", n.Mask, mask.Shape, total)
			}
		}
	}
	return c, nil
}

// Tie returns m with the concat form's mask length, when the model names it as a dim of its own
// (say total_seq), replaced by the past plus the new positions, which it is: a binding then
// derives it, and planning never meets a mask that disagrees with the cache. Other models are
// returned as they are. The cache recognised in m describes the result too.
func (c *Cache) Tie(m *graph.Model) (*graph.Model, error) {
	if c.Form != Concat || c.MaskDim == "" {
		return m, nil
	}
	spec := m.Spec()
	total := graph.Sym(c.PastDim).Add(graph.Sym(c.SeqDim))
	for i, in := range spec.Inputs {
		for j, d := range in.Shape {
			if symName(d) == c.MaskDim {
				if in.Name != c.Mask {
					return nil, &RecognitionError{Problem: fmt.Sprintf("dim %q of the mask is also input %q's", c.MaskDim, in.Name)}
				}
				spec.Inputs[i].Shape[j] = total
			}
		}
	}
	tied, err := graph.Build(spec)
	if err != nil {
		return nil, fmt.Errorf("generate: tying the mask's length %q to %s: %w", c.MaskDim, total, err)
	}
	c.MaskDim = ""
	return tied, nil
}

// Prepare recognises m's KV cache (Recognize) and returns the model to run for generation: m
// with the concat form's mask length tied to the cache (Tie) and the greedy choice added as an
// output (AddGreedy).
func Prepare(m *graph.Model, names Names) (*graph.Model, *Cache, error) {
	c, err := Recognize(m, names)
	if err != nil {
		return nil, nil, err
	}
	if m, err = c.Tie(m); err != nil {
		return nil, nil, err
	}
	if m, err = c.AddGreedy(m); err != nil {
		return nil, nil, err
	}
	return m, c, nil
}

// greedyName is the name AddGreedy gives its output (with a suffix if the model has a value of
// that name).
const greedyName = "carve.greedy_ids"

// AddGreedy returns m with one more output, c.Greedy: ArgMax of the logits over the vocabulary
// ([batch, seq], int64; the first of equals, as Greedy picks). A greedy decode step then reads
// batch token ids from the device instead of batch rows of logits, which at Qwen's vocabulary
// of 151936 cost a 0.3 MB copy and a 0.1 ms scan on the host for every token of every sequence.
// The result shares m's weights.
func (c *Cache) AddGreedy(m *graph.Model) (*graph.Model, error) {
	name := greedyName
	for i := 1; m.Value(name) != nil; i++ {
		name = fmt.Sprintf("%s.%d", greedyName, i)
	}
	spec := m.Spec()
	spec.Nodes = append(spec.Nodes, graph.NodeSpec{Name: name, OpType: "ArgMax", Inputs: []string{c.Logits}, Outputs: []string{name},
		Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: -1},
			graph.Attribute{Name: "keepdims", Kind: graph.AttrInt, Int: 0})})
	spec.Outputs = append(spec.Outputs, name)
	g, err := graph.Build(spec)
	if err != nil {
		return nil, fmt.Errorf("generate: adding the greedy choice over %q: %w", c.Logits, err)
	}
	c.Greedy = name
	return g, nil
}

// readByGQA reports whether a GroupQueryAttention node reads v.
func readByGQA(v *graph.Value) bool {
	for _, n := range v.Consumers {
		if n.OpType == "GroupQueryAttention" {
			return true
		}
	}
	return false
}

// symName is d's name when d is one named dim, else "".
func symName(d graph.Dim) string {
	syms := d.Syms(nil)
	if len(syms) == 1 && d.String() == syms[0] {
		return syms[0]
	}
	if len(syms) == 1 && strconv.Quote(syms[0]) == d.String() {
		return syms[0]
	}
	return ""
}

func valueNames(vs []*graph.Value) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	sort.Strings(names)
	if len(names) > 12 {
		names = append(names[:12], fmt.Sprintf("and %d more", len(names)-12))
	}
	return strings.Join(names, ", ")
}

// BytesPerToken is what one position of one sequence takes in the cache: keys and values of
// every layer.
func (c *Cache) BytesPerToken() int64 {
	return int64(len(c.Layers)) * 2 * c.KVHeads * c.HeadDim * c.DType.Size()
}

func isIndex(dt graph.DType) bool { return dt == graph.Int64 || dt == graph.Int32 }

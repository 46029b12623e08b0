package testmodels

import "fmt"

// The forms of KV cache a Generation's model has.
const (
	// FormConcat is the transformers/optimum export convention: past_key_values.{i}.key|value
	// [batch, kv_heads, past_seq, head_dim] in, present.{i}.key|value [batch, kv_heads,
	// total_seq, head_dim] out (the past with the new keys appended), position_ids an input.
	FormConcat = "concat"
	// FormGQA is onnxruntime GenAI's convention: com.microsoft.GroupQueryAttention, past and
	// present one buffer [batch, kv_heads, max_seq, head_dim], the new keys written at
	// seqlens_k (attention_mask's row sums minus one), no position_ids.
	FormGQA = "gqa"
)

// Generation is a greedy generation onnxruntime (CPU) ran with a model's KV cache, the
// reference for an engine's decode loop: a prompt of PromptLen tokens for each of Batch rows,
// then Steps new tokens, each the argmax of the last position's logits. Step 0's token comes
// from the prompt run, so the loop is the prompt run and Steps-1 decode runs of one token,
// each feeding the present outputs back as the next past with attention_mask all ones of
// length past+seq (and, in the concat form, position_ids past..past+seq-1).
type Generation struct {
	Form      string `json:"form"` // FormConcat or FormGQA
	Batch     int64  `json:"batch"`
	PromptLen int64  `json:"prompt_len"`
	Steps     int64  `json:"steps"`
	MaxSeq    int64  `json:"max_seq"` // the cache buffer's length (FormGQA only)
	Layers    int64  `json:"layers"`
	KVHeads   int64  `json:"kv_heads"`
	HeadDim   int64  `json:"head_dim"`

	PromptFile string `json:"prompt"` // int64 [Batch, PromptLen]
	TokensFile string `json:"tokens"` // int64 [Batch, Steps]: the new tokens only
	LogitsFile string `json:"logits"` // float32 [Steps, Batch, vocab]: the logits that chose each token

	model *Model // whose files these are; set by Load
}

// Prompt returns the prompt's token ids, int64 [Batch, PromptLen].
func (g *Generation) Prompt() (Array, error) {
	return g.read(g.PromptFile, true, g.Batch, g.PromptLen)
}

// Tokens returns the generated token ids, int64 [Batch, Steps].
func (g *Generation) Tokens() (Array, error) {
	return g.read(g.TokensFile, true, g.Batch, g.Steps)
}

// Logits returns the logits each new token was chosen from, float32 [Steps, Batch, vocab].
func (g *Generation) Logits() (Array, error) {
	return g.read(g.LogitsFile, false, g.Steps, g.Batch, -1)
}

// read decodes file and checks its dtype and shape (-1: any size).
func (g *Generation) read(file string, ints bool, shape ...int64) (Array, error) {
	a, err := g.model.Array(file)
	if err != nil {
		return Array{}, err
	}
	ok := len(a.Shape) == len(shape) && (ints == (a.Int64 != nil))
	for i := 0; ok && i < len(shape); i++ {
		ok = shape[i] < 0 || a.Shape[i] == shape[i]
	}
	if !ok {
		return Array{}, fmt.Errorf("testmodels: %s has shape %v (int64 %v), want %v", file, a.Shape, a.Int64 != nil, shape)
	}
	return a, nil
}

// Dims returns a value for every dim of the model: batch rows of seq new tokens and, for a
// model with a KV cache, a past of past tokens (past_seq = past and total_seq = past + seq; in
// the GQA form max_seq = Generation.MaxSeq, which past + seq must not exceed).
func (m Model) Dims(batch, seq, past int64) map[string]int64 {
	d := map[string]int64{"batch": batch, "seq": seq}
	switch g := m.Generation; {
	case g == nil:
	case g.Form == FormGQA:
		d["total_seq"], d["max_seq"] = past+seq, g.MaxSeq
	default:
		d["past_seq"], d["total_seq"] = past, past+seq
	}
	return d
}

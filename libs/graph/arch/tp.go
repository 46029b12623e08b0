package arch

import (
	"fmt"

	"carve.dev/libs/graph/shard"
)

// TP is a Megatron tensor-parallel split of a decoder over Ranks ranks, as one rank holds it: the
// attention's heads and the MLP's columns divided among the ranks (q, k, v, gate and up split by
// columns; o_proj and down_proj by rows, each followed by an all-reduce of [batch, seq, hidden]),
// the embedding and the LM head split by vocabulary (a rank looks up the ids of its shard, and an
// all-reduce sums the shards' rows), the norms whole on every rank. It is the plan of what
// carve.dev/libs/graph/shard gives each rank of a loaded model (whose tests check that the two
// hold the same weights).
type TP struct {
	Ranks int
	// Per rank.
	Heads, KVHeads, Intermediate, Vocab int64
	// KVReplicas is how many ranks hold each KV head: 1 when there are at least as many KV heads
	// as ranks, ranks / kv_heads otherwise (every rank holds one KV head, max(1, kv/N)).
	KVReplicas int64
	// AllReduces is the all-reduces of one forward pass: one after each layer's attention and
	// each layer's MLP, and one after the embedding.
	AllReduces int
}

// Split returns the config of one rank of a tensor-parallel split over ranks: Build and BuildKV
// of it make the rank's graph (its weights, activations and KV cache). An all-reduce is in place
// (NCCL reduces a buffer into itself), so the split adds no activation; the communicator's own
// buffers are the runtime's, not the graph's. The split needs ranks to divide
// num_attention_heads, intermediate_size and vocab_size, and num_key_value_heads and ranks to
// divide one another; a *ConfigError names the field that does not.
func (c *Config) Split(ranks int) (*Config, *TP, error) {
	bad := func(field, format string, args ...any) (*Config, *TP, error) {
		return nil, nil, &ConfigError{ModelType: c.ModelType, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	n := int64(ranks)
	switch {
	case ranks < 1:
		return bad("", "tensor parallelism over %d ranks: want at least 1", ranks)
	case !c.splittable():
		return bad("model_type", "tensor parallelism is built for the Llama lineage without norms over a whole projection (llama, mistral, qwen2, qwen3, phi3, granite, smollm3, gemma, stablelm, starcoder2)")
	case c.Heads%n != 0:
		return bad("num_attention_heads", "%d heads do not split over %d ranks", c.Heads, ranks)
	case c.Intermediate%n != 0:
		return bad("intermediate_size", "%d columns do not split over %d ranks", c.Intermediate, ranks)
	case c.Vocab%n != 0:
		return bad("vocab_size", "%d rows do not split over %d ranks (a vocabulary-parallel embedding and LM head need a multiple of the ranks)", c.Vocab, ranks)
	case c.KVHeads >= n && c.KVHeads%n != 0:
		return bad("num_key_value_heads", "%d KV heads do not split over %d ranks", c.KVHeads, ranks)
	case c.KVHeads < n && n%c.KVHeads != 0:
		return bad("num_key_value_heads", "%d KV heads cannot be replicated over %d ranks (want ranks a multiple of them)", c.KVHeads, ranks)
	}
	// The heads per rank are shard's rule, the one the runtime splits a loaded graph by.
	h, err := shard.SplitHeads(c.Heads, c.KVHeads, 0, ranks)
	if err != nil {
		return bad("num_key_value_heads", "%v", err)
	}
	tp := &TP{Ranks: ranks, Heads: h.Q, KVHeads: h.KV, Intermediate: c.Intermediate / n, Vocab: c.Vocab / n,
		KVReplicas: h.KVReplicas, AllReduces: 2*c.Layers + 1}
	r := *c
	r.Heads, r.KVHeads, r.Intermediate, r.Vocab = tp.Heads, tp.KVHeads, tp.Intermediate, tp.Vocab
	return &r, tp, nil
}

// splittable reports whether Split applies to the family: its builder sizes every projection by
// heads x head_dim, and no norm spans a whole projection (olmo2's q and k norms would need the
// ranks' statistics).
func (c *Config) splittable() bool {
	st, ok := llamaStyles[c.Family]
	return ok && st.qkNorm != "full"
}

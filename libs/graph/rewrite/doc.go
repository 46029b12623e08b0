/*
Package rewrite fuses the subgraphs an exporter writes out op by op into the fused ops carve's
kernels implement, so that a model plans and runs as if it had been exported fused.

PyTorch's ONNX exporter writes scaled dot-product attention as MatMul, scale, mask Add, Softmax
and MatMul: the seq x seq scores and probabilities become tensors of the arena, and at long
sequences they are its peak. Fuse replaces them, in a new Model, by ONNX's Attention (opset 23),
whose kernels never materialise them (a soft cap c*tanh(x/c) on the scores, as Gemma2 writes
it, becomes the Attention's softcap); and, where a kernel exists, RMSNorm and LayerNorm written
as primitive ops by RMSNormalization and LayerNormalization, x*sigmoid(x) by Swish (opset 24),
the gated MLP's swish(gate) * up by carve's SwiGLU (graph.DomainCarve), and that SwiGLU of
the two products over one input, gate = A·Wg and up = A·Wu with 2-D weights, by carve's
GatedMatMul(A, Wg, Wu), GELU written out (its tanh or erf form) by Gelu (opset 20), the
rotate-half rotary embedding by com.microsoft.RotaryEmbedding, a product with a transposed
weight or with a bias (a linear layer's MatMul and Add) by Gemm, and a GatherElements of
expanded indices by carve's GatherElements, which reads them unexpanded. A model that gets an
op of a newer opset than it imports imports that opset in the result.

	fused, report, err := rewrite.Fuse(m, rewrite.Options{})

# What a rewrite promises

 1. The input Model is not modified; the result is a new Model built with graph.Build, so it
    passed the validation and shape inference Load applies. It shares the input's weights
    (closing either closes both).
 2. A fused node produces the value the pattern's last node produced, under the same name:
    graph outputs and every consumer outside the pattern are untouched. Nodes of the pattern
    that nothing else reads are removed; nodes still read elsewhere stay.
 3. A pattern fuses only when it matches whole: every op, attribute, constant, dtype and rank
    is checked, every intermediate value is read by the pattern alone and is no graph output,
    and dims that are constants must agree. Conditions on symbolic dims that the exported
    graph implies but that cannot be proven here are checked at Bind by the fused op's shape
    inference. A candidate that does not match is left as exported, and the Report says why.
 4. The fused graph computes what the exported one computes, up to float rounding (float32
    outputs agree within 1e-5 relative on the fixtures, also left-padded; half-precision
    graphs, whose exported form rounds the scores and probabilities to 16 bits, come out closer
    to float32). That includes query rows whose every key is masked out: with a finite mask
    fill the exported softmax averages V over every key, and the fused graph does too. One
    exception: where the mask fill is -inf, such a row, which the exported graph turns into
    NaN unless it guards the softmax as PyTorch does (IsNaN, Where), comes out zero.

# Masks

The mask an attention candidate adds to its scores is recognised by what it computes, not by
the ops that spell it: maskeval.go evaluates its subgraph on probe bindings and compares it
with the canonical masks: a band of keys about the diagonal (causal, a sliding window, a
local band both ways, or all) with or without padding (its comment says why the probes decide
it; a window too long to probe is taken as a parameter). The fused Attention reads the band
as is_causal and carve's window_left / window_right. A mask it cannot decide is matched by
the forms in mask.go, and failing those read whole.

PyTorch's masked_fill of the scores, Where(c, fill, scores) with a scalar fill of at most -1e4
(DeBERTa's XSoftmax), is read as the term Where(keep, 0, fill) added to them: the same
wherever the scores are small beside the fill, as item 4 assumes. A padding mask may pad the
queries as well as the keys (DeBERTa's is the attention mask times itself): the fused Attention
reads the keys' padding and the padded queries' rows are set to the mean of V after it (zero
for -inf), as the exported softmax of a row whose every key is masked gives.

Besides a mask, the scores may get biases: values added to them that evaluation does not
recognise as a mask, such as Bloom's ALiBi, a per-key bias for each head [batch, heads, 1,
keys]. Each is added whole to the fused Attention's float attn_mask, beside the one mask
recognised (its causal part as is_causal, its padding added to the biases), so a per-key bias
leaves no queries x keys tensor either. The sum is what the exported graph adds, up to float
rounding; where the mask's fill is finite, a masked score is the fill plus the bias, which is
the fill when the scores and biases are small beside it (the float minimum), as item 4
assumes of the scores. A bool mask joins the sum as -inf. Two masks with a band or padding
each stay as exported.

# Relative-position biases

A term gathered from a table linear in the sequence by an index that depends on i - j alone,
as DeBERTa's content-to-position and position-to-content terms are (GatherElements of
Q·posK^T and K·posQ^T, scaled, the second transposed), becomes the fused Attention's relative
bias (graph.AttnRelC2P): the tables as they are, and per table an int32 index of one entry per
diagonal, S + T - 1 of them, computed by the index's own elementwise ops over Range(1 - T, S).
relbias.go proves the index a function of i - j by construction (elementwise ops of such
values and scalars, over sums of positions whose form the mask evaluator reads at three
probes) and says why where it cannot: such a term is read whole.

# The batch·heads form

Exporters of attention written with batched products (Bloom's baddbmm and bmm) hold the
scores and probabilities as [batch*heads, queries, keys] and Reshape them to and from
[batch, heads, queries, keys] about the masks and the softmax. A Reshape moves no element; one
whose shapes keep the last two dims and split the first into [B, H] (or merge them) maps entry
(n, i, j) to (n / H, n % H, i, j), so both forms hold the same scores (heads.go proves it from
the shapes). Every such Reshape of a pattern must split by the same [B, H]; the fused
Attention reads the 4-D Q, K and V (those the exporter merged, or Reshapes of the 3-D ones by
the same H) and 3-D terms split the same way, and a 3-D output is merged back from its output.
A Reshape of the scores or probabilities that does anything else (moves keys or queries,
splits by another H) leaves the attention as exported, with the reason.

# Scales

The scalars that scale the scores, Q or K^T must be known at load: constants, or values the
export computes on the host from constants and dims that are constants, as TorchScript computes
1/sqrt(head_dim) from Q's Shape. hostscalar.go evaluates them with the mask evaluator, reading
shape computations as graph infers them before binding (graph.Model.HostData); a scale that
depends on a symbolic dim, or on anything computed at run time, stays as exported, with the
reason.

# Layouts

An Attention whose Q, K and V are views of one tensor, copied by the exporter's movement ops
(Transpose, Gather, Slice, Split, through Reshapes), reads that tensor in place through
carve's layouts (graph.AttrQLayout): views.go maps every element of Q, K and V back through
the movement ops to the element of the tensor it came from, affinely in the attention's
indices, whatever ops spelled it, and the map's coefficients give each tensor's axes (batch,
heads, sequence, head size, the index of a packed section). Its output is written in the order
the last Transpose after it puts it. Products that compute each row alike (MatMul and Gemm of a
weight, Add of a bias) on either side are made again over the rows where they lie, so that
nn.MultiheadAttention's transposes to and from sequence-first go as well: its in-projection
computes [B, S, 3E] from the unmoved [B, S, E], the attention reads it as [B, S, 3, H, D] and
writes [B, S, H, D], and the out-projection reads that. The Shape nodes that read a value the
fusion removes (TorchScript's) are made again from the graph inputs' shapes. Every copy
between the attention and the tensor must go (a copy another node reads, such as V's for the
fix of padded rows, leaves the attention as it is): reading the projection in place beside a
copy that stays would only keep both.

# Candidates

Every Softmax over the last axis is an attention candidate, every ReduceMean over the last
axis of x*x or of x-mean(x) a norm candidate, every Sigmoid a SiLU candidate, every Mul of a
Swish (or of an x*sigmoid(x)) a SwiGLU candidate, every dev.carve.SwiGLU (those the SwiGLU
pass made included) a gated-matmul candidate, every Tanh and Erf a GELU candidate, every Neg
that feeds a Concat on the last axis a rotary candidate, every MatMul of a transposed weight a
transposed-weight candidate, every Add of a MatMul's product and a weight a matmul-bias
candidate, every Attention of 4-D Q, K and V without a past that come from one value through
movement ops an attention-layout candidate, and every GatherElements of an Expand's output an
expanded-gather candidate (a gather fused as an
attention's relative bias is gone by then). Fuse reports each as fused or, with the reason, not.

# Concurrency

Fuse reads its input Model only and may run concurrently with other readers of it.
*/
package rewrite

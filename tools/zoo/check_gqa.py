#!/usr/bin/env python3
"""Compares a gqa_builder graph with the transformers model it was built from, stage by stage,
on one prompt (prefill): the embeddings, each layer's norms, attention, MLP and the logits,
read from onnxruntime as extra graph outputs and from PyTorch through forward hooks. For a
mixture-of-experts family it also runs one com.microsoft.MoE node alone against the block, in
each gate/up order, so that a difference in onnxruntime's SwiGLU convention shows by itself.
A tool for the GPU host (its CPU is enough) when make_zoo_kv.py reports that a GenAI-form
graph does not compute its model:

    python3 tools/zoo/check_gqa.py --family gemma3 [--family mixtral_moe ...]
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))


def stages(model):
    """name in the graph -> (module, how to read its output) for the first layer."""
    inner = model.model
    l0 = inner.layers[0]
    first = (lambda o: o[0] if isinstance(o, tuple) else o)
    out = {"embeds": (inner.embed_tokens, first)}
    for name, mod in [("model.layers.0.input_layernorm", l0.input_layernorm),
                      ("model.layers.0.attn_o", l0.self_attn),
                      ("model.layers.0.post_attention_layernorm", getattr(l0, "post_attention_layernorm", None)),
                      ("model.layers.0.pre_feedforward_layernorm", getattr(l0, "pre_feedforward_layernorm", None)),
                      ("model.layers.0.mlp", getattr(l0, "mlp", None) or getattr(l0, "block_sparse_moe", None)),
                      ("model.layers.0.post_feedforward_layernorm", getattr(l0, "post_feedforward_layernorm", None)),
                      ("model.layers.1.input_layernorm", inner.layers[1].input_layernorm)]:
        if mod is not None:
            out[name] = (mod, first)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", action="append", required=True)
    a = ap.parse_args()
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import helper as h

    import gqa_builder
    import make_kv_fixtures as mk
    from make_zoo import families

    for fam in a.family:
        print(f"== {fam}")
        torch.manual_seed(1234)
        wide = dict(hidden_size=64, intermediate_size=128)
        if fam == "gemma3":
            wide.update(head_dim=16, query_pre_attn_scalar=16)
        model = families()[fam][1](initializer_range=0.1, use_cache=True, **wide).eval()
        cfg = model.config
        spec = gqa_builder.spec_of(model)
        print("  spec:", {k: v for k, v in vars(spec).items() if "freq" not in k})
        print("  rotary buffers:", [(n, tuple(b.shape)) for n, b in model.model.rotary_emb.named_buffers()])
        print("  inv_freq", spec.inv_freq[:4].tolist(), "local", spec.local_inv_freq[:4].tolist())
        experts = None
        if spec.moe:
            blk = [getattr(layer, "mlp", None) or layer.block_sparse_moe for layer in model.model.layers]
            experts = [gqa_builder.moe_weights(b, spec) for b in blk]
            moe_alone(fam, experts[0], blk[0], spec)
        gm = gqa_builder.build(dict(model.state_dict()), spec, 64, name=fam, experts=experts)
        names = {n for node in gm.graph.node for n in node.output}
        st = stages(model)
        alias = {"model.layers.0.attn_o": "model.layers.0.o"}
        if "embeds_scaled" in names:
            alias["embeds"] = "embeds_scaled"
        extra = []
        for k in st:
            g = alias.get(k, k)
            if g in names:
                extra.append(g)
                gm.graph.output.append(h.make_tensor_value_info(g, onnx.TensorProto.FLOAT, None))
        sess = ort.InferenceSession(gm.SerializeToString(), providers=["CPUExecutionProvider"])
        b, s = 2, 7
        prompt = np.random.default_rng(0).integers(3, cfg.vocab_size, (b, s), dtype=np.int64)
        KV, HD = spec.kv_heads, spec.head_dim
        feeds = {"input_ids": prompt, "attention_mask": np.ones((b, s), np.int64)}
        for i in range(spec.layers):
            for kind in ("key", "value"):
                feeds[f"past_key_values.{i}.{kind}"] = np.zeros((b, KV, 64, HD), np.float32)
        res = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        got = {}
        hooks = [mod.register_forward_hook(lambda m, i, o, k=k, rd=rd: got.__setitem__(k, rd(o)))
                 for k, (mod, rd) in st.items()]
        with torch.no_grad():
            tl = model(torch.from_numpy(prompt), attention_mask=torch.ones(b, s, dtype=torch.int64)).logits
        for hk in hooks:
            hk.remove()
        for k in st:
            g = alias.get(k, k)
            if g not in res or k not in got:
                print(f"  {k:45s} not compared ({'graph' if g not in res else 'torch'} lacks it)")
                continue
            t = got[k].float().numpy().reshape(res[g].shape)
            print(f"  {k:45s} max |diff| {np.abs(res[g] - t).max():.3e}  (|torch| max {np.abs(t).max():.3e})")
        print(f"  {'logits':45s} max |diff| {np.abs(res['logits'] - tl.numpy()).max():.3e}")
        decode(model, gm, spec, prompt)


def decode(model, gm, spec, prompt):
    """The greedy decode of the graph (make_kv_fixtures.generate), of transformers' generate
    and of transformers without a cache, step by step. (With transformers 5.17, generate's
    cached decode leaves its own uncached forward on Gemma3 from the fourth token: the graph
    follows the uncached one, which make_zoo_kv.py takes as the reference.)"""
    import onnxruntime as ort

    import make_kv_fixtures as mk

    mk.LAYERS, mk.KV_HEADS, mk.HEAD_DIM, mk.VOCAB = spec.layers, spec.kv_heads, spec.head_dim, spec.vocab
    del gm.graph.output[1 + 2 * spec.layers:]
    sess = ort.InferenceSession(gm.SerializeToString(), providers=["CPUExecutionProvider"])
    ot, ol = mk.generate(sess, prompt, shared=True)
    gt, gl = mk.torch_greedy(model, prompt)
    rt, rl = mk.torch_recompute_greedy(model, prompt)
    for name, (t, lg) in (("generate", (gt, gl)), ("no cache", (rt, rl))):
        diff = np.abs(ol - lg).max(axis=(1, 2))
        bad = [i for i in range(mk.STEPS) if not (ot[:, i] == t[:, i]).all()]
        print(f"  decode vs transformers {name}: first differing token step {bad[:1]}, "
              f"logits diff per step {np.array2string(diff[:12], precision=1)}")


def moe_alone(fam, ex, block, spec):
    """One MoE node against the block, for each fc1 interleave order and activation convention."""
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import TensorProto as TP
    from onnx import helper as h

    router, g, u, d, normalize = ex
    E, K = spec.moe
    H = spec.hidden
    x = torch.randn(16, H, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        want = block(x[None])
        want = (want[0] if isinstance(want, tuple) else want).reshape(16, H).numpy()
    logits = (x @ router.t()).numpy()
    for order, (first, second) in (("gate,up", (g, u)), ("up,gate", (u, g))):
        for attrs in ({"activation_alpha": 1.0, "activation_beta": 0.0}, {}):
            fc1 = torch.stack([first, second], 2).reshape(E, 2 * g.shape[1], H).numpy()
            node = h.make_node("MoE", ["x", "r", "fc1", "", "fc2"], ["y"], domain="com.microsoft", k=K,
                               activation_type="swiglu", swiglu_fusion=1, normalize_routing_weights=int(normalize),
                               **attrs)
            graph = h.make_graph([node], "moe", [h.make_tensor_value_info("x", TP.FLOAT, [16, H]),
                                                 h.make_tensor_value_info("r", TP.FLOAT, [16, E])],
                                 [h.make_tensor_value_info("y", TP.FLOAT, [16, H])],
                                 [onnx.numpy_helper.from_array(fc1, "fc1"),
                                  onnx.numpy_helper.from_array(d.numpy().copy(), "fc2")])
            mp = h.make_model(graph, opset_imports=[h.make_opsetid("", 21), h.make_opsetid("com.microsoft", 1)])
            mp.ir_version = 10
            try:
                y = ort.InferenceSession(mp.SerializeToString(), providers=["CPUExecutionProvider"]).run(
                    None, {"x": x.numpy(), "r": logits})[0]
                print(f"  MoE alone, fc1 rows {order}, attrs {attrs}: max |diff| {np.abs(y - want).max():.3e}")
            except Exception as e:  # noqa: BLE001
                print(f"  MoE alone, fc1 rows {order}, attrs {attrs}: {type(e).__name__}: {str(e)[:200]}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds carve's model zoo: tiny random-weight models of the architecture families users run,
exported the way users export them today, with onnxruntime CPU references.

The zoo is not a fixture set to tune against: it is the sample of what users bring. Every
family is built from its transformers class with a config made here (nothing is downloaded),
seeded random weights, and exported by:
  - torch.onnx.export's default (dynamo) exporter, with and without an attention_mask input;
  - the TorchScript exporter (dynamo=False, what optimum writes), with an attention_mask input,
    where it works.
Each model's onnxruntime outputs are recorded at two (batch, seq) bindings, the second with
right padding in its attention_mask, and its config.json is saved beside it. Exporter stack
traces and doc strings are stripped.

Runs on the GPU machine (its CPU is enough), which has torch, transformers, onnx, onnxruntime
and onnxscript:
    PYTHONUNBUFFERED=1 python3 tools/zoo/make_zoo.py --out DIR [--only fam1,fam2] [--jobs N]
Then, here: python3 tools/zoo/import_zoo.py DIR/zoo.tgz unpacks it into
libs/graph/testmodels/zoo, which the Go package testmodels embeds (testmodels.Zoo()).
A family that fails to build or export is recorded in manifest.json's "failures" with the
reason; nothing is retried silently.
"""

import argparse
import os
import re
import shutil
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import zoo_run  # noqa: E402
from make_fixtures import describe, inline_functions, rename_dims, strip, versions  # noqa: E402

T0 = time.time()
VOCAB = 128
HID = 32
HEADS = 4
KV = 2
HD = HID // HEADS
FF = 64
LAYERS = 2
# Long enough for the seq-linearity test's (8, 2048) plans; the learned position tables this
# makes are most of the encoders' weights.
MAXPOS = 2050
# (batch, seq, valid keys per row or None for all ones): the second binding is right-padded.
BINDINGS = [(1, 7, None), (2, 16, [16, 11])]


def log(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


# ---------------------------------------------------------------- families

def families():
    """name -> (task, builder). A builder returns (model, config)."""
    import transformers as tf

    def dec(cfg_cls, model_cls, **kw):
        def b(**extra):
            base = dict(vocab_size=VOCAB, hidden_size=HID, intermediate_size=FF, num_hidden_layers=LAYERS,
                        num_attention_heads=HEADS, num_key_value_heads=KV, max_position_embeddings=MAXPOS,
                        pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False,
                        use_cache=False)
            base.update(kw)
            base.update(extra)
            base = {k: v for k, v in base.items() if v is not _DROP}
            return model_cls(cfg_cls(**base))
        return b

    F = {}
    F["llama"] = ("decoder", dec(tf.LlamaConfig, tf.LlamaForCausalLM))
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 16}

    def llama3_rope(**extra):
        try:  # transformers 5 names it rope_parameters, with the theta inside
            return dec(tf.LlamaConfig, tf.LlamaForCausalLM, rope_parameters=dict(llama3, rope_theta=10000.0))(**extra)
        except Exception:  # noqa: BLE001
            return dec(tf.LlamaConfig, tf.LlamaForCausalLM, rope_scaling=llama3)(**extra)
    F["llama3_rope"] = ("decoder", llama3_rope)
    F["mistral_sliding"] = ("decoder", dec(tf.MistralConfig, tf.MistralForCausalLM, sliding_window=5))
    F["qwen2"] = ("decoder", dec(tf.Qwen2Config, tf.Qwen2ForCausalLM, use_sliding_window=False))
    F["qwen3"] = ("decoder", dec(tf.Qwen3Config, tf.Qwen3ForCausalLM, head_dim=HD))
    F["phi3"] = ("decoder", dec(tf.Phi3Config, tf.Phi3ForCausalLM, sliding_window=None))
    F["gemma"] = ("decoder", dec(tf.GemmaConfig, tf.GemmaForCausalLM, head_dim=HD))
    F["gemma2"] = ("decoder", dec(tf.Gemma2Config, tf.Gemma2ForCausalLM, head_dim=HD, sliding_window=5,
                                  query_pre_attn_scalar=HD, attn_logit_softcapping=50.0,
                                  final_logit_softcapping=30.0))
    def gemma2_eager(**extra):
        # transformers' eager attention, the one that soft-caps the scores (sdpa cannot)
        m = dec(tf.Gemma2Config, tf.Gemma2ForCausalLM, head_dim=HD, sliding_window=5, query_pre_attn_scalar=HD,
                attn_logit_softcapping=50.0, final_logit_softcapping=30.0)(**extra)
        m.config._attn_implementation = "eager"
        for layer in m.model.layers:
            layer.self_attn.config._attn_implementation = "eager"
        return m
    F["gemma2_eager"] = ("decoder", gemma2_eager)
    F["gemma3"] = ("decoder", dec(tf.Gemma3TextConfig, tf.Gemma3ForCausalLM, head_dim=HD, sliding_window=5,
                                  query_pre_attn_scalar=HD, sliding_window_pattern=2))
    F["olmo2"] = ("decoder", dec(tf.Olmo2Config, tf.Olmo2ForCausalLM))
    F["granite"] = ("decoder", dec(tf.GraniteConfig, tf.GraniteForCausalLM))
    F["stablelm"] = ("decoder", dec(tf.StableLmConfig, tf.StableLmForCausalLM, partial_rotary_factor=0.5))
    F["smollm3"] = ("decoder", dec(tf.SmolLM3Config, tf.SmolLM3ForCausalLM)) if hasattr(tf, "SmolLM3Config") else None
    F["mixtral_moe"] = ("decoder", dec(tf.MixtralConfig, tf.MixtralForCausalLM, num_local_experts=4,
                                       num_experts_per_tok=2, sliding_window=None))
    F["qwen2_moe"] = ("decoder", dec(tf.Qwen2MoeConfig, tf.Qwen2MoeForCausalLM, num_experts=4,
                                     num_experts_per_tok=2, moe_intermediate_size=32,
                                     shared_expert_intermediate_size=32, use_sliding_window=False))

    def gpt2():
        return tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=VOCAB, n_positions=MAXPOS, n_embd=HID, n_layer=LAYERS,
                                                n_head=HEADS, n_inner=FF, use_cache=False))
    F["gpt2"] = ("decoder", gpt2)

    def neox():
        return tf.GPTNeoXForCausalLM(tf.GPTNeoXConfig(vocab_size=VOCAB, hidden_size=HID, num_hidden_layers=LAYERS,
                                                      num_attention_heads=HEADS, intermediate_size=FF,
                                                      max_position_embeddings=MAXPOS, rotary_pct=0.25,
                                                      use_cache=False, tie_word_embeddings=False))
    F["gpt_neox"] = ("decoder", neox)

    def bigcode():
        return tf.GPTBigCodeForCausalLM(tf.GPTBigCodeConfig(vocab_size=VOCAB, n_positions=MAXPOS, n_embd=HID,
                                                            n_layer=LAYERS, n_head=HEADS, n_inner=FF,
                                                            multi_query=True, use_cache=False))
    F["gpt_bigcode"] = ("decoder", bigcode)

    def falcon():
        return tf.FalconForCausalLM(tf.FalconConfig(vocab_size=VOCAB, hidden_size=HID, num_hidden_layers=LAYERS,
                                                    num_attention_heads=HEADS, multi_query=True, alibi=False,
                                                    use_cache=False))
    F["falcon"] = ("decoder", falcon)

    def bloom():  # ALiBi position biases, fused query_key_value, a LayerNorm after the embeddings
        return tf.BloomForCausalLM(tf.BloomConfig(vocab_size=VOCAB, hidden_size=HID, n_layer=LAYERS, n_head=HEADS,
                                                  use_cache=False, tie_word_embeddings=False))
    F["bloom"] = ("decoder", bloom)

    def gptj():  # rotary on interleaved pairs of the first rotary_dim values, attention and MLP in parallel
        return tf.GPTJForCausalLM(tf.GPTJConfig(vocab_size=VOCAB, n_embd=HID, n_layer=LAYERS, n_head=HEADS,
                                                n_inner=FF, rotary_dim=HD // 2, n_positions=MAXPOS,
                                                use_cache=False, tie_word_embeddings=False))
    F["gptj"] = ("decoder", gptj)

    def phi():  # Phi-2: a parallel block, partial rotary, biases everywhere
        return tf.PhiForCausalLM(tf.PhiConfig(vocab_size=VOCAB, hidden_size=HID, intermediate_size=FF,
                                              num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                              num_key_value_heads=KV, partial_rotary_factor=0.5,
                                              max_position_embeddings=MAXPOS, use_cache=False,
                                              tie_word_embeddings=False))
    F["phi"] = ("decoder", phi)
    F["starcoder2"] = ("decoder", dec(tf.Starcoder2Config, tf.Starcoder2ForCausalLM, sliding_window=6,
                                      use_bias=True)) if hasattr(tf, "Starcoder2Config") else None
    F["cohere"] = ("decoder", dec(tf.CohereConfig, tf.CohereForCausalLM, logit_scale=0.25,
                                  use_qk_norm=False)) if hasattr(tf, "CohereConfig") else None

    def opt():
        return tf.OPTForCausalLM(tf.OPTConfig(vocab_size=VOCAB, hidden_size=HID, num_hidden_layers=LAYERS,
                                              num_attention_heads=HEADS, ffn_dim=FF, max_position_embeddings=MAXPOS,
                                              word_embed_proj_dim=HID, pad_token_id=1, use_cache=False))
    F["opt"] = ("decoder", opt)

    def enc(cfg_cls, model_cls, **kw):
        def b():
            base = dict(vocab_size=VOCAB, hidden_size=HID, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                        intermediate_size=FF, max_position_embeddings=MAXPOS + 2, pad_token_id=0)
            base.update(kw)
            return model_cls(cfg_cls(**base))
        return b
    F["bert"] = ("encoder", enc(tf.BertConfig, tf.BertModel, type_vocab_size=2))
    F["roberta"] = ("encoder", enc(tf.RobertaConfig, tf.RobertaModel, pad_token_id=1))
    F["xlm_roberta"] = ("encoder", enc(tf.XLMRobertaConfig, tf.XLMRobertaModel, pad_token_id=1))
    F["electra"] = ("encoder", enc(tf.ElectraConfig, tf.ElectraModel, embedding_size=HID))
    F["deberta_v2"] = ("encoder", enc(tf.DebertaV2Config, tf.DebertaV2Model, relative_attention=True,
                                      position_buckets=8, max_relative_positions=MAXPOS, pos_att_type=["p2c", "c2p"],
                                      type_vocab_size=0))
    F["modernbert"] = ("encoder", enc(tf.ModernBertConfig, tf.ModernBertModel, global_attn_every_n_layers=2,
                                      local_attention=4, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                      cls_token_id=1, sep_token_id=2))

    def distil():
        return tf.DistilBertModel(tf.DistilBertConfig(vocab_size=VOCAB, dim=HID, n_layers=LAYERS, n_heads=HEADS,
                                                      hidden_dim=FF, max_position_embeddings=MAXPOS))
    F["distilbert"] = ("encoder", distil)

    def t5():
        return tf.T5EncoderModel(tf.T5Config(vocab_size=VOCAB, d_model=HID, d_kv=HD, d_ff=FF, num_layers=LAYERS,
                                             num_heads=HEADS, relative_attention_num_buckets=8,
                                             relative_attention_max_distance=16, feed_forward_proj="gated-gelu"))
    F["t5_encoder"] = ("encoder", t5)

    def clip():
        return tf.CLIPTextModel(tf.CLIPTextConfig(vocab_size=VOCAB, hidden_size=HID, intermediate_size=FF,
                                                  num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                                  max_position_embeddings=MAXPOS, pad_token_id=0, bos_token_id=1,
                                                  eos_token_id=2))
    F["clip_text"] = ("encoder", clip)
    return {k: v for k, v in F.items() if v is not None}


class _Drop:
    pass


_DROP = _Drop()


# ---------------------------------------------------------------- export

def wrap(model, task, with_mask):
    import torch

    out_name = "logits" if task == "decoder" else "last_hidden_state"

    class W(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask=None):
            kw = dict(input_ids=input_ids, return_dict=True)
            if attention_mask is not None:
                kw["attention_mask"] = attention_mask
            if task == "decoder":
                kw["use_cache"] = False
            out = self.m(**kw)
            return out.logits if task == "decoder" else out.last_hidden_state

    names = ["input_ids", "attention_mask"] if with_mask else ["input_ids"]
    return W(model), names, [out_name]


def feeds(names, b, s, valid):
    ids = ((np.arange(b * s, dtype=np.int64) * 7 + 3) % (VOCAB - 3) + 3).reshape(b, s)
    out = {"input_ids": ids}
    if "attention_mask" in names:
        m = np.ones((b, s), dtype=np.int64)
        if valid is not None:
            for r, n in enumerate(valid):
                m[r, n:] = 0
        out["attention_mask"] = m
    return out


# The example the exporters trace: padded, so that no exporter can drop the mask because the
# example's attention_mask was all ones (transformers skips an all-ones mask when it can see it).
EXAMPLE = (2, 8, [8, 5])


def export_dynamo(wrapper, names, outs):
    import torch
    from torch.export import Dim

    ex = feeds(names, *EXAMPLE)
    args = tuple(torch.from_numpy(ex[n]) for n in names)
    last = None
    for label, mk in [("min 1", lambda: (Dim("batch", min=1, max=64), Dim("seq", min=1, max=MAXPOS))),
                      ("min 2", lambda: (Dim("batch", min=1, max=64), Dim("seq", min=2, max=MAXPOS))),
                      ("DYNAMIC", lambda: (Dim.DYNAMIC, Dim.DYNAMIC))]:
        b, s = mk()
        ds = {n: {0: b, 1: s} for n in names}
        try:
            prog = torch.onnx.export(wrapper, args, dynamo=True, dynamic_shapes=ds, input_names=names,
                                     output_names=outs, optimize=True)
            return prog.model_proto, f"dynamo, dims {label}"
        except Exception as e:  # noqa: BLE001
            last = e
    raise last


def export_torchscript(wrapper, names, outs, tmp):
    import onnx
    import torch

    ex = feeds(names, *EXAMPLE)
    args = tuple(torch.from_numpy(ex[n]) for n in names)
    path = os.path.join(tmp, "ts.onnx")
    axes = {n: {0: "batch", 1: "seq"} for n in names}
    axes[outs[0]] = {0: "batch", 1: "seq"}
    torch.onnx.export(wrapper, args, path, dynamo=False, input_names=names, output_names=outs,
                      dynamic_axes=axes, opset_version=17, do_constant_folding=True)
    return onnx.load(path), "torchscript, opset 17"


def references(name, mp, names, task, outdir, entry):
    import onnxruntime as ort
    import torch

    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(mp.SerializeToString(), so, providers=["CPUExecutionProvider"])
    out_names = [o.name for o in sess.get_outputs()]
    entry["bindings"] = []
    for bi, (b, s, valid) in enumerate(BINDINGS):
        rec = {"dims": {"batch": b, "seq": s}, "inputs": {}, "outputs": {}}
        f = feeds(names, b, s, valid)
        for k, v in f.items():
            fn = f"{name}.b{bi}.in.{k}.npy"
            np.save(os.path.join(outdir, fn), v)
            rec["inputs"][k] = fn
        try:
            res = sess.run(out_names, f)
        except Exception as e:  # noqa: BLE001
            rec["error"] = f"{type(e).__name__}: {e}"[:1000]
            entry["bindings"].append(rec)
            continue
        for k, v in zip(out_names, res):
            fn = f"{name}.b{bi}.out.{k}.npy"
            np.save(os.path.join(outdir, fn), v)
            rec["outputs"][k] = fn
        entry["bindings"].append(rec)
    return entry


def one_family(fam, outdir):
    """Builds, exports and references one family; returns (entries, failures, config)."""
    import torch
    import transformers as tf

    torch.set_num_threads(1)
    task, builder = families()[fam]
    entries, failures = [], []
    torch.manual_seed(1234)
    try:
        model = builder()
    except Exception as e:  # noqa: BLE001
        return [], [{"family": fam, "step": "build", "error": f"{type(e).__name__}: {e}"[:1500]}]
    model.eval()
    cfg_file = f"{fam}.config.json"
    model.config.to_json_file(os.path.join(outdir, cfg_file))
    tmp = os.path.join(outdir, f".tmp-{fam}")
    os.makedirs(tmp, exist_ok=True)
    variants = [("dynamo", True), ("dynamo", False), ("torchscript", True)]
    for exporter, with_mask in variants:
        name = f"{fam}.{'ts' if exporter == 'torchscript' else 'dyn'}{'_mask' if with_mask else ''}"
        t = time.time()
        try:
            wrapper, names, outs = wrap(model, task, with_mask)
            with torch.no_grad():
                if exporter == "dynamo":
                    mp, how = export_dynamo(wrapper, names, outs)
                else:
                    mp, how = export_torchscript(wrapper, names, outs, tmp)
            mp = inline_functions(strip(rename_dims(mp, names)))
            path = os.path.join(outdir, name + ".onnx")
            import onnx
            onnx.save_model(mp, path)
            entry = {"name": name, "file": name + ".onnx", "kind": fam, "family": fam, "task": task,
                     "exporter": exporter, "attention_mask": with_mask, "config": cfg_file,
                     "attn_implementation": model.config._attn_implementation,
                     "export": f"torch.onnx.export {how}, {model.__class__.__name__}",
                     "inputs_rule": "stored .npy inputs; the second binding is right-padded", "vocab": VOCAB}
            entry.update(describe(mp))
            references(name, mp, names, task, outdir, entry)
            errors = [r["error"] for r in entry["bindings"] if "error" in r]
            if len(errors) == len(entry["bindings"]):  # an export onnxruntime cannot run is no zoo model
                raise RuntimeError("onnxruntime cannot run the export: " + errors[0])
            # torch's own output at the padded binding, as a check of the reference
            b, s, valid = BINDINGS[-1]
            f = feeds(names, b, s, valid)
            with torch.no_grad():
                want = wrapper(*[torch.from_numpy(f[n]) for n in names]).float().numpy()
            got_file = entry["bindings"][-1]["outputs"].get(outs[0])
            if got_file:
                got = np.load(os.path.join(outdir, got_file))
                entry["torch_vs_ort_max_abs"] = float(np.max(np.abs(got - want)))
            entries.append(entry)
            log(f"  {name}: {entry['nodes']} nodes in {time.time() - t:.1f}s")
        except Exception as e:  # noqa: BLE001
            zoo_run.drop(outdir, name)  # no half-made model (its .onnx is saved before the references)
            msg = f"{type(e).__name__}: {e}"
            failures.append({"family": fam, "step": name, "error": msg[:1500]})
            log(f"  {name} FAILED: {msg[:300]}")
    shutil.rmtree(tmp, ignore_errors=True)
    return entries, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=min(14, os.cpu_count() or 1))
    a = ap.parse_args()
    fams = sorted(families())
    if a.only:
        fams = [f for f in fams if f in a.only.split(",")]
    zoo_run.run(one_family, fams, a.out, "zoo", versions(), a.jobs)


if __name__ == "__main__":
    main()

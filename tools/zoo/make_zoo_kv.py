#!/usr/bin/env python3
"""Builds the zoo's KV-cache decoders: for each decoder family below, the family's zoo model
(make_zoo.py's config, initializer_range 0.1 so that greedy tokens are decided by clear
margins) exported with its cache in the forms users meet, and onnxruntime CPU's greedy
generation as the reference (batch 2, a 7-token prompt, 32 new tokens):

  FAMILY.kv_ts    the transformers/optimum concat convention through the TorchScript exporter:
                  input_ids, attention_mask, position_ids, past_key_values.{i}.key|value
                  [batch, kv_heads, past, head_dim] -> logits, present.{i}.key|value
  FAMILY.kv_dyn   the same convention through the dynamo exporter (where it exports and runs)
  FAMILY.gqa      onnxruntime GenAI's form (tools/fixtures/gqa_builder.py, separate q, k and v
                  MatMuls, as GenAI writes models for the CPU), for the Llama-shaped families
  FAMILY.gqa_packed  the same with one packed q|k|v MatMul (GenAI's use_packed_matmul)
  FAMILY.gqa_q4   FAMILY.gqa with int4 weights, as GenAI's builder writes `-p int4 -e cpu`:
                  every MatMul over a weight (the LM head too) through onnxruntime's
                  MatMulNBitsQuantizer (4 bits, block 32, symmetric), activations float32

Runs on the GPU host (its CPU is enough):
    PYTHONUNBUFFERED=1 python3 tools/zoo/make_zoo_kv.py --out DIR
writes DIR/zoo_kv.tgz; then here: python3 tools/zoo/import_zoo.py zoo.tgz zoo_kv.tgz
"""

import argparse
import os
import shutil
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import make_kv_fixtures as mk  # noqa: E402
import zoo_run  # noqa: E402
from make_fixtures import describe, strip, versions  # noqa: E402
from make_zoo import families  # noqa: E402

FAMILIES = ["llama", "qwen2", "qwen3", "phi3", "gemma3", "mistral_sliding", "granite", "olmo2", "mixtral_moe"]
# The families gqa_builder writes (Llama-shaped, Phi-3's packed projections split as GenAI splits
# them, Granite's multipliers, Mixtral's experts as com.microsoft.MoE, Gemma3);
# onnxruntime's GroupQueryAttention wants a head size that is a multiple of 16, so these
# families are built at hidden 64 (head_dim 16).
GQA = {"llama", "qwen2", "mistral_sliding", "gemma3", "mixtral_moe", "phi3", "granite"}
# Families neither exporter writes with a cache: transformers 5.17's experts use grouped_mm
# (dynamo) and histc (TorchScript), as the prefill zoo's failures record.
NO_CONCAT = {"mixtral_moe": "neither exporter writes transformers 5.17's experts (grouped_mm, histc)"}
# GQA forms per family: Gemma3's q/k norms sit between the projections and the attention, so
# GenAI's builder keeps them separate.
GQA_FORMS = {"gemma3": (("gqa", False),), "llama": (("gqa", False), ("gqa_packed", True), ("gqa_q4", False))}
Q4_BLOCK = 32


def quantize_q4(mp):
    """mp's MatMuls over weights as MatMulNBits, as GenAI's builder quantizes int4 models."""
    try:
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer as Q
    except ImportError:
        from onnxruntime.quantization.matmul_4bits_quantizer import MatMul4BitsQuantizer as Q
    q = Q(mp, block_size=Q4_BLOCK, is_symmetric=True)
    q.process()
    out = q.model.model if hasattr(q.model, "model") else q.model
    if not any(n.op_type == "MatMulNBits" for n in out.graph.node):
        raise RuntimeError("the quantizer wrote no MatMulNBits")
    return out
T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


def one(fam, outdir):
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(1234)
    _, builder = families()[fam]
    wide = dict(hidden_size=64, intermediate_size=128) if fam in GQA else {}
    if fam == "gemma3":
        wide.update(head_dim=16, query_pre_attn_scalar=16)
    if fam == "granite":  # Granite-3.0's multipliers, so that each shows in the graph
        wide.update(embedding_multiplier=12.0, residual_multiplier=0.22, attention_multiplier=0.2, logits_scaling=8.0)
    model = builder(initializer_range=0.1, use_cache=True, **wide).eval()
    cfg = model.config
    mk.LAYERS = cfg.num_hidden_layers
    mk.KV_HEADS = cfg.num_key_value_heads
    mk.HEAD_DIM = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    mk.VOCAB = cfg.vocab_size
    tmp = os.path.join(outdir, f".tmp-{fam}")
    os.makedirs(tmp, exist_ok=True)
    gen = {"batch": mk.BATCH, "prompt_len": mk.PROMPT, "steps": mk.STEPS, "layers": mk.LAYERS,
           "kv_heads": mk.KV_HEADS, "head_dim": mk.HEAD_DIM}
    entries, failures = [], []
    prompt = None
    ref = None
    seed0 = None
    for form in ("kv_ts", "kv_dyn"):
        name = f"{fam}.{form}"
        if fam in NO_CONCAT:
            failures.append({"family": fam, "step": name, "error": NO_CONCAT[fam]})
            continue
        try:
            why = "the TorchScript form was asked for" if form == "kv_ts" else None
            mp, label = mk.export_concat(model, tmp, why)
            if form == "kv_dyn" and "TorchScript" in label:
                raise RuntimeError("the dynamo exporter failed: " + label[:500])
            mp = strip(mp)
            io_dims = mk.rename_kv_dims(mp)
            sess = mk.session(mp)
            if prompt is None:
                for seed in range(200):
                    p = np.random.default_rng(seed).integers(3, mk.VOCAB, (mk.BATCH, mk.PROMPT), dtype=np.int64)
                    toks, logits = mk.generate(sess, p, shared=False)
                    if mk.margin(logits) >= mk.MARGIN:
                        prompt, ref = p, (seed, toks, logits)
                        break
                if prompt is None:
                    raise RuntimeError(f"no prompt seed of 200 gave every step a top-2 margin over {mk.MARGIN}")
            toks, logits = mk.generate(sess, prompt, shared=False)
            import onnx
            onnx.save_model(mp, os.path.join(outdir, name + ".onnx"))
            entry = {"name": name, "file": name + ".onnx", "kind": fam, "family": fam, "task": "decoder",
                     "exporter": "torchscript" if "TorchScript" in label else "dynamo", "attention_mask": True,
                     "config": f"{fam}.kv.config.json", "export": label, "vocab": mk.VOCAB,
                     "inputs_rule": f"generation: prompt = numpy default_rng({ref[0]}).integers(3, vocab, (2, 7))",
                     "io_dims": io_dims,
                     "checks": {"min_top2_margin": mk.margin(logits),
                                "tokens_equal_first_form": bool((toks == ref[1]).all())}}
            entry.update(describe(mp))
            entry["generation"] = dict(gen, form="concat", **mk.write_gen(outdir, name, prompt, toks, logits))
            entries.append(entry)
            log(f"  {name}: {entry['nodes']} nodes, {label[:80]}")
        except Exception as e:  # noqa: BLE001
            failures.append({"family": fam, "step": name, "error": f"{type(e).__name__}: {e}"[:1500]})
            log(f"  {name} FAILED: {type(e).__name__}: {str(e)[:300]}")
    if fam in GQA:
        import gqa_builder
        for form, packed in GQA_FORMS.get(fam, (("gqa", False), ("gqa_packed", True))):
            name = f"{fam}.{form}"
            try:
                state = dict(model.state_dict())
                spec = gqa_builder.spec_of(model)
                experts = None
                if spec.moe:  # the block is mlp in transformers 5, block_sparse_moe in 4
                    experts = [gqa_builder.moe_weights(getattr(layer, "mlp", None) or layer.block_sparse_moe, spec)
                               for layer in model.model.layers]
                gm = gqa_builder.build(state, spec, mk.MAX_SEQ, name=name, packed_qkv=packed, experts=experts)
                q4 = form.endswith("_q4")
                if q4:
                    gm = quantize_q4(gm)
                sess = mk.session(gm)
                if q4 and prompt is not None and mk.margin(mk.generate(sess, prompt, shared=True)[1]) < mk.MARGIN:
                    raise RuntimeError(f"the int4 model's greedy steps on the family's prompt have a top-2 margin under {mk.MARGIN}")
                if prompt is None:  # no concat form ran (sliding-window layers): GenAI's form is how users meet it
                    for seed in range(200):
                        p = np.random.default_rng(seed).integers(3, mk.VOCAB, (mk.BATCH, mk.PROMPT), dtype=np.int64)
                        if mk.margin(mk.generate(sess, p, shared=True)[1]) >= mk.MARGIN:
                            prompt, seed0 = p, seed
                            break
                    else:
                        raise RuntimeError(f"no prompt seed of 200 gave every step a top-2 margin over {mk.MARGIN}")
                toks, logits = mk.generate(sess, prompt, shared=True)
                torch_check = {}
                if ref is None and not q4:  # no export to compare with: transformers' own uncached greedy decode is the check
                    ttoks, tlogits = mk.torch_recompute_greedy(model, prompt)
                    torch_check = {"tokens_equal_torch": bool((toks == ttoks).all()),
                                   "max_logits_diff_torch": float(np.abs(logits - tlogits).max())}
                    if not torch_check["tokens_equal_torch"] or torch_check["max_logits_diff_torch"] > 1e-4:
                        raise RuntimeError(f"the GenAI-form graph does not compute the model: {torch_check}")
                gqa_builder.save(gm, os.path.join(outdir, name + ".onnx"))
                entry = {"name": name, "file": name + ".onnx", "kind": fam, "family": fam, "task": "decoder",
                         "exporter": "gqa_builder", "attention_mask": True, "config": f"{fam}.kv.config.json",
                         "export": f"gqa_builder.py (GenAI's form{', packed q|k|v' if packed else ', separate q, k, v'}"
                                   + (f", int4 MatMulNBits block {Q4_BLOCK} by onnxruntime's quantizer)" if q4 else ")"),
                         "vocab": mk.VOCAB, "inputs_rule": entries[0]["inputs_rule"] if entries else f"generation: prompt = numpy default_rng({seed0}).integers(3, vocab, (2, 7))",
                         "checks": {"min_top2_margin": mk.margin(logits), "int4_block": Q4_BLOCK,
                                    "tokens_equal_float": bool((toks == ref[1]).all()) if ref else None} if q4 else
                         dict(torch_check, min_top2_margin=mk.margin(logits)) if ref is None else
                         {"tokens_equal_concat": bool((toks == ref[1]).all()),
                          "max_logits_diff_concat": float(np.abs(logits - ref[2]).max()),
                          "min_top2_margin": mk.margin(logits)}}
                entry.update(describe(gm))
                entry["generation"] = dict(gen, form="gqa", max_seq=mk.MAX_SEQ,
                                           **mk.write_gen(outdir, name, prompt, toks, logits))
                entries.append(entry)
                log(f"  {name}: {entry['checks']}")
            except Exception as e:  # noqa: BLE001
                failures.append({"family": fam, "step": name, "error": f"{type(e).__name__}: {e}"[:1500]})
                log(f"  {name} FAILED: {type(e).__name__}: {str(e)[:300]}")
    cfg.to_json_file(os.path.join(outdir, f"{fam}.kv.config.json"))
    shutil.rmtree(tmp, ignore_errors=True)
    return entries, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    fams = [f for f in FAMILIES if not a.only or f in a.only.split(",")]
    zoo_run.run(one, fams, a.out, "zoo_kv", versions(), len(fams))


if __name__ == "__main__":
    main()

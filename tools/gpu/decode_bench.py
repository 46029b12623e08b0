#!/usr/bin/env python3
"""Decode speed of a Qwen2.5-1.5B-shaped model (random bf16 weights, built from a local config,
nothing downloaded) on the GPU host: PyTorch's static decode next to carve's `runner generate`.

  --export DIR   writes DIR/model.onnx (+ model.onnx.data) in onnxruntime GenAI's form
                 (GroupQueryAttention, past and present one buffer of --max-seq, q/k/v as one packed
                 MatMul as GenAI writes models for CUDA), bf16, with the builder the KV fixtures use
                 (tools/fixtures/gqa_builder.py).
  --torch        PyTorch's static decode at each --batches with a --context token prompt, then
                 --steps greedy decode steps, each timed with CUDA events (ms/token p50, p99):
                   own-eager / own-graph: a plain Qwen2 decode over a preallocated KV cache of
                     context + steps positions: SDPA with the query heads grouped per KV head,
                     rotary and cache writes in place, argmax into the next step's input; graph =
                     one decode step captured with torch.cuda.graph and replayed;
                   hf-eager / hf-graph: transformers' Qwen2ForCausalLM with its StaticCache, the
                     same capture (skipped with the reason if transformers' code cannot be captured).
  --carve RUNNER runs `RUNNER generate --model DIR/model.onnx (or --model FILE) --device cuda --graph --batch B
                 --prompt-len CONTEXT --max-new-tokens STEPS --format json` for each batch and puts
                 its figures next to PyTorch's (a failure is recorded, not fatal).
Prints one table and writes decode_bench.json into --out.

Measured on the H200 (torch 2.11, transformers 5.17; 28 layers, context 1024, 64 steps), ms/token p50:
  batch  own-eager  own-graph  hf-eager  hf-graph
      1      22.02       3.75     25.01      4.25
      8      17.98       3.87     27.87      6.14
(prefill of 1024 tokens, warm: 23 ms at batch 1, 52 ms at batch 8). The export took 9 s
and writes 3.55 GB (the tied embedding is also stored transposed as lm_head, as GenAI does).

Usage on the GPU host:
  PYTHONUNBUFFERED=1 python3 tools/gpu/decode_bench.py --export /tmp/qwen --torch --carve ./runner --out $OUT
  (--layers 2 for a quick smoke test)
"""

import argparse
import json
import os
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))


def log(*a):
    print(f"[{time.strftime('%H:%M:%S')}]", *a, flush=True)


def build(layers, device):
    import torch
    import transformers as tf

    cfg = tf.Qwen2Config(vocab_size=151936, hidden_size=1536, intermediate_size=8960, num_hidden_layers=layers,
                         num_attention_heads=12, num_key_value_heads=2, max_position_embeddings=32768,
                         rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True,
                         use_sliding_window=False, use_cache=True)
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(device):
            model = tf.Qwen2ForCausalLM(cfg)
    finally:
        torch.set_default_dtype(old)
    model.eval()
    return model, cfg


def export(model, outdir, max_seq):
    import gqa_builder

    os.makedirs(outdir, exist_ok=True)
    t = time.time()
    state = dict(model.state_dict())
    mp = gqa_builder.build(state, gqa_builder.spec_of(model), max_seq, dtype="bfloat16", external_dir=outdir,
                           external_name="model.onnx.data", name="qwen2_gqa_bf16", packed_qkv=True)
    path = os.path.join(outdir, "model.onnx")
    gqa_builder.save(mp, path)
    size = os.path.getsize(os.path.join(outdir, "model.onnx.data"))
    log(f"exported {path}: {len(mp.graph.node)} nodes, {size / 1e9:.2f} GB of weights, in {time.time() - t:.1f}s")
    return path, size


# ---------------------------------------------------------------- PyTorch: own static decode


class Own:
    """Qwen2 decode over a preallocated cache, using the transformers model's parameters."""

    def __init__(self, model, batch, max_len):
        import torch

        cfg = model.config
        self.m = model.model
        self.lm = model.lm_head.weight
        self.B, self.L = batch, max_len
        self.H, self.KV = cfg.num_attention_heads, cfg.num_key_value_heads
        self.D = cfg.hidden_size // self.H
        self.eps = cfg.rms_norm_eps
        dev, dt = self.lm.device, self.lm.dtype
        self.k = [torch.zeros(batch, self.KV, max_len, self.D, device=dev, dtype=dt) for _ in self.m.layers]
        self.v = [torch.zeros_like(x) for x in self.k]
        inv = self.m.rotary_emb.inv_freq.float().to(dev)
        f = torch.outer(torch.arange(max_len, device=dev, dtype=torch.float32), inv)
        emb = torch.cat([f, f], -1)
        self.cos, self.sin = emb.cos().to(dt), emb.sin().to(dt)
        self.ar = torch.arange(max_len, device=dev)

    def rope(self, x, cos, sin):
        import torch

        h = x.shape[-1] // 2
        rot = torch.cat([-x[..., h:], x[..., :h]], -1)
        return x * cos + rot * sin

    def step(self, ids, pos):
        """ids [B, S], pos [S] int64 on the device; returns next tokens [B] (argmax of the last
        position)."""
        import torch
        import torch.nn.functional as F

        B, S = ids.shape
        G = self.H // self.KV
        x = self.m.embed_tokens(ids)
        cos, sin = self.cos[pos][None, None], self.sin[pos][None, None]  # [1,1,S,D]
        allowed = self.ar[None, :] <= pos[:, None]  # [S, L]
        mask = allowed.repeat(G, 1)[None, None]  # [1,1,G*S,L]: rows are (group, position)
        for i, layer in enumerate(self.m.layers):
            a = layer.self_attn
            h = F.rms_norm(x, (x.shape[-1],), layer.input_layernorm.weight, self.eps)
            q = a.q_proj(h).view(B, S, self.H, self.D).transpose(1, 2)
            k = a.k_proj(h).view(B, S, self.KV, self.D).transpose(1, 2)
            v = a.v_proj(h).view(B, S, self.KV, self.D).transpose(1, 2)
            q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
            self.k[i].index_copy_(2, pos, k)
            self.v[i].index_copy_(2, pos, v)
            qg = q.reshape(B, self.KV, G * S, self.D)
            o = F.scaled_dot_product_attention(qg, self.k[i], self.v[i], attn_mask=mask)
            o = o.reshape(B, self.H, S, self.D).transpose(1, 2).reshape(B, S, self.H * self.D)
            x = x + a.o_proj(o)
            h = F.rms_norm(x, (x.shape[-1],), layer.post_attention_layernorm.weight, self.eps)
            mlp = layer.mlp
            x = x + mlp.down_proj(F.silu(mlp.gate_proj(h)) * mlp.up_proj(h))
        x = F.rms_norm(x[:, -1], (x.shape[-1],), self.m.norm.weight, self.eps)
        return F.linear(x, self.lm).argmax(-1)


def captured(step):
    """step captured into a CUDA graph, after three warm-up calls on a side stream (PyTorch's
    recipe): returns the graph's replay."""
    import torch

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    return g.replay


def time_steps(fn, steps):
    """Runs fn() steps times, each between two CUDA events; returns per-step ms."""
    import torch

    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(steps)]
    for a, b in ev:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) for a, b in ev]


def summary(ms):
    import numpy as np

    a = np.array(ms)
    return {"ms_p50": float(np.percentile(a, 50)), "ms_p99": float(np.percentile(a, 99)), "ms_mean": float(a.mean()),
            "steps": len(ms)}


def bench_own(model, batch, context, steps, vocab):
    import torch

    out = {}
    dev = model.lm_head.weight.device
    for graph in (False, True):
        own = Own(model, batch, context + steps + 16)
        prompt = torch.randint(0, vocab, (batch, context), device=dev)
        ids = torch.zeros(batch, 1, dtype=torch.int64, device=dev)
        pos = torch.zeros(1, dtype=torch.int64, device=dev)
        with torch.inference_mode():
            torch.cuda.synchronize()
            t = time.perf_counter()
            ids[:, 0] = own.step(prompt, torch.arange(context, device=dev))
            torch.cuda.synchronize()
            ttft = (time.perf_counter() - t) * 1000
            if not graph:
                # The plain decode is transformers' model: the prompt's next tokens agree.
                ref = model(input_ids=prompt, use_cache=False, logits_to_keep=1).logits[:, -1].argmax(-1)
                out["check_prompt_tokens_agree"] = float((ref == ids[:, 0]).float().mean())
            pos.fill_(context)

            def eager():
                ids[:, 0] = own.step(ids, pos)
                pos.add_(1)

            fn = captured(eager) if graph else eager
            for _ in range(3):
                fn()
            ms = time_steps(fn, steps)
        name = "own-graph" if graph else "own-eager"
        out[name] = dict(summary(ms), ttft_ms=ttft)
        log(f"torch {name} b={batch}: p50 {out[name]['ms_p50']:.3f} ms/token, prefill {ttft:.1f} ms")
        del own
        torch.cuda.empty_cache()
    return out


def bench_hf(model, batch, context, steps, vocab):
    """transformers' StaticCache decode, eager and captured."""
    import torch
    from transformers import StaticCache

    out = {}
    dev = model.lm_head.weight.device
    max_len = context + steps + 16
    for graph in (False, True):
        name = "hf-graph" if graph else "hf-eager"
        try:
            try:
                cache = StaticCache(config=model.config, max_cache_len=max_len)
            except TypeError:
                cache = StaticCache(config=model.config, max_batch_size=batch, max_cache_len=max_len, device=dev,
                                    dtype=model.lm_head.weight.dtype)
            prompt = torch.randint(0, vocab, (batch, context), device=dev)
            ids = torch.zeros(batch, 1, dtype=torch.int64, device=dev)
            cp = torch.zeros(1, dtype=torch.int64, device=dev)
            with torch.inference_mode():
                torch.cuda.synchronize()
                t = time.perf_counter()
                o = model(input_ids=prompt, cache_position=torch.arange(context, device=dev), past_key_values=cache,
                          use_cache=True, logits_to_keep=1)
                ids[:, 0] = o.logits[:, -1].argmax(-1)
                torch.cuda.synchronize()
                ttft = (time.perf_counter() - t) * 1000
                cp.fill_(context)

                def eager():
                    o = model(input_ids=ids, cache_position=cp, past_key_values=cache, use_cache=True, logits_to_keep=1)
                    ids[:, 0] = o.logits[:, -1].argmax(-1)
                    cp.add_(1)

                fn = captured(eager) if graph else eager
                for _ in range(3):
                    fn()
                ms = time_steps(fn, steps)
            out[name] = dict(summary(ms), ttft_ms=ttft)
            log(f"torch {name} b={batch}: p50 {out[name]['ms_p50']:.3f} ms/token, prefill {ttft:.1f} ms")
        except Exception as e:  # noqa: BLE001
            out[name] = {"error": f"{type(e).__name__}: {e}"[:600]}
            log(f"torch {name} b={batch} failed: {out[name]['error'][:300]}")
            torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return out


def run_carve(runner, model_path, batch, context, steps, timeout):
    cmd = [runner, "generate", "--model", model_path, "--device", "cuda", "--graph", "--batch", str(batch),
           "--prompt-len", str(context), "--max-new-tokens", str(steps), "--format", "json"]
    log("$", " ".join(cmd))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"[:600], "cmd": cmd}
    if p.returncode != 0:
        return {"error": f"exit {p.returncode}: {(p.stderr or p.stdout)[-600:]}", "cmd": cmd}
    try:
        j = json.loads(p.stdout)
    except Exception as e:  # noqa: BLE001
        return {"error": f"output is not JSON ({e}): {p.stdout[-300:]}", "cmd": cmd}
    return {"ms_p50": find_num(j, ("p50",)), "ms_p99": find_num(j, ("p99",)), "raw": j}


def find_num(j, parts):
    """The first number in j (nested) whose key contains every part; the runner's JSON layout
    is not fixed yet."""
    if isinstance(j, dict):
        for k, v in j.items():
            if isinstance(v, (int, float)) and all(p in k.lower() for p in parts):
                return float(v)
        for v in j.values():
            r = find_num(v, parts)
            if r is not None:
                return r
    elif isinstance(j, list):
        for v in j:
            r = find_num(v, parts)
            if r is not None:
                return r
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--export", metavar="DIR", help="write DIR/model.onnx in the GQA form")
    ap.add_argument("--max-seq", type=int, default=2048, help="the GQA model's KV buffer length")
    ap.add_argument("--torch", action="store_true", help="measure PyTorch's static decode")
    ap.add_argument("--hf", default="1", help="0 skips transformers' StaticCache variant")
    ap.add_argument("--carve", metavar="RUNNER", help="measure RUNNER generate on DIR/model.onnx")
    ap.add_argument("--model", help="for --carve without --export: a model.onnx exported earlier")
    ap.add_argument("--layers", type=int, default=28, help="decoder layers (28 is Qwen2.5-1.5B)")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--carve-timeout", type=float, default=300)
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    if a.carve and not (a.export or a.model):
        ap.error("--carve needs --export DIR or --model FILE")
    import torch

    os.makedirs(a.out, exist_ok=True)
    batches = [int(b) for b in a.batches.split(",") if b]
    res = {"layers": a.layers, "context": a.context, "steps": a.steps, "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None, "rows": []}
    t = time.time()
    model, cfg = build(a.layers, "cuda")
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    res["weight_bytes"] = weights
    log(f"built {a.layers} layers in {time.time() - t:.1f}s, {weights / 1e9:.2f} GB of parameters")
    model_path = None
    if a.export:
        model_path, res["export_data_bytes"] = export(model, a.export, a.max_seq)
    elif a.carve:
        model_path = a.model
    for b in batches:
        row = {"batch": b}
        if a.torch:
            try:
                row.update(bench_own(model, b, a.context, a.steps, cfg.vocab_size))
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                row["own"] = {"error": f"{type(e).__name__}: {e}"[:600]}
            if a.hf != "0":
                row.update(bench_hf(model, b, a.context, a.steps, cfg.vocab_size))
        if a.carve:
            row["carve"] = run_carve(a.carve, model_path, b, a.context, a.steps, a.carve_timeout)
            log(f"carve b={b}:", {k: v for k, v in row["carve"].items() if k != "raw"})
        res["rows"].append(row)
        with open(os.path.join(a.out, "decode_bench.json"), "w") as f:
            json.dump(res, f, indent=1)
    cols = ["own-eager", "own-graph", "hf-eager", "hf-graph", "carve"]
    print(f"\nms/token p50, {a.layers} layers, context {a.context}, {a.steps} steps ({res['gpu']})")
    print("batch  " + "  ".join(f"{c:>10}" for c in cols))
    for row in res["rows"]:
        cells = []
        for c in cols:
            v = row.get(c, {})
            cells.append(f"{v['ms_p50']:10.3f}" if isinstance(v, dict) and v.get("ms_p50") is not None
                         else f"{'-' if not v else 'failed':>10}")
        print(f"{row['batch']:5d}  " + "  ".join(cells))
    print(f"weights {weights / 1e9:.2f} GB; JSON in {os.path.join(a.out, 'decode_bench.json')}")


if __name__ == "__main__":
    main()

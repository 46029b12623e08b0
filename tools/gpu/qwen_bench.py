#!/usr/bin/env python3
"""carve's runner against PyTorch eager on a Qwen2.5-1.5B-shaped model, on the GPU host.

Builds the model from a local transformers config (Qwen2.5-1.5B's sizes, 28 layers, random bf16
weights, nothing downloaded), exports it with torch.onnx.export (dynamo, dims batch and seq,
external data) into a scratch folder, then, for each (batch, seq), measures:
  - PyTorch eager: the mean latency of a forward pass (after warm-up) and the peak device memory
    beyond the weights (torch.cuda.max_memory_allocated minus the weights' bytes);
  - carve: `runner bench --device cuda` on the exported file, its p50 latency and its arena
    reservation (the device memory it holds beyond the weights, reserved at load).
Each measurement is made for the model's two outputs (--logits):
  - all:  logits [batch, seq, vocab], the forward pass as exported by default (both sides hold
          the whole [batch, seq, vocab] bf16 logits: 593 MiB at (1, 2048));
  - last: logits [batch, 1, vocab], the last position's only, as transformers' generate() runs a
          prefill (logits_to_keep=1, which both the export and PyTorch's forward pass are given).
Prints one table and writes qwen_bench.json beside the logs.

Usage (on the GPU host, from the folder tools/gpu/build.sh filled, with the runner built):
  PYTHONUNBUFFERED=1 python3 qwen_bench.py --runner ./runner --out $OUT [--shapes 1x512,1x2048,8x1024]
      [--logits all,last] [--variants 'eager=--outputs device;graph=--graph --outputs device;graph-host=--graph']
      [--export DIR] [--profile '--graph --outputs device']
carve's default variants leave the outputs on the device (runner bench --outputs device), as PyTorch's
forward pass leaves its logits on the GPU; graph-host copies them back to host memory each run;
tight reserves the tight plan (runner --tight: cuBLASLt workspaces at what the device says their
algorithms need instead of their 32 MiB caps).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# make_fixtures.py holds the model builder and exporter the fixtures use; build.sh copies it here.
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))


def log(*a):
    print(f"[{time.strftime('%H:%M:%S')}]", *a, flush=True)


def torch_eager(model, shapes, vocab, reps, last, weights):
    """PyTorch eager's mean latency and peak memory beyond the weights (weights: the bytes allocated
    once the model was on the device, before any forward pass, so that cuBLAS's workspace, which
    the first product allocates and keeps, counts as extra memory in every measurement) at each
    shape; with last, the forward pass computes the last position's logits only
    (logits_to_keep=1)."""
    import torch

    dev = torch.device("cuda")
    out = {}
    for b, s in shapes:
        ids = torch.randint(0, vocab, (b, s), device=dev)
        mask = torch.ones((b, s), dtype=torch.int64, device=dev)
        kw = {"logits_to_keep": 1} if last else {}
        with torch.inference_mode():
            for _ in range(2):
                model(input_ids=ids, attention_mask=mask, use_cache=False, **kw)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            t = time.perf_counter()
            for _ in range(reps):
                model(input_ids=ids, attention_mask=mask, use_cache=False, **kw)
            torch.cuda.synchronize()
            ms = (time.perf_counter() - t) * 1000 / reps
        peak = torch.cuda.max_memory_allocated() - weights
        out[(b, s)] = {"ms": ms, "extra_bytes": peak}
        log(f"torch eager logits={'last' if last else 'all'} b={b} s={s}: {ms:.2f} ms, +{peak / 2**20:.0f} MiB")
    return out


class LastLogits:
    """Wraps a causal LM so that it returns the last position's logits only, [batch, 1, vocab]."""

    @staticmethod
    def make(model):
        import torch

        class W(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask):
                return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False,
                              logits_to_keep=1, return_dict=True).logits
        return W(model), ["input_ids", "attention_mask"], ["logits"]


def export(model, path, last):
    import onnx
    import make_fixtures as mf

    if last:
        wrapper, names, outs = LastLogits.make(model)
    else:
        wrapper, names, outs = mf.Wrapper.make(model, "qwen2")
    prog, label = mf.export("qwen2-1.5b", wrapper, names, outs, 4096)
    d = os.path.dirname(path)
    raw = os.path.join(d, "raw_" + os.path.basename(path))
    prog.save(raw, external_data=True)
    mp = onnx.load(raw, load_external_data=False)
    mp = mf.inline_functions(mf.strip(mf.rename_dims(mp, names)))
    with open(path, "wb") as f:
        f.write(mp.SerializeToString())  # the initializers still point at the raw file's data
    log(f"exported ({label}) to {path}")


def bench_cmd(runner, path, b, s, runs, extra):
    """runner bench on the GPU at (b, s): 2 warm-up runs, then runs timed ones, with extra flags."""
    return [runner, "bench", "--device", "cuda", "--model", path, "--dim", f"batch={b}", "--dim", f"seq={s}",
            "--warmup", "2", "--runs", str(runs)] + extra


def carve(runner, path, b, s, runs, extra):
    cmd = bench_cmd(runner, path, b, s, runs, ["--format", "json"] + extra)
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        msg = (p.stderr or p.stdout).strip().splitlines()
        return {"error": msg[-1] if msg else f"exit {p.returncode}", "exit": p.returncode}
    rep = json.loads(p.stdout)
    res = rep["reservation"]
    return {"ms": rep["latency_ms"]["p50"], "extra_bytes": res["total_arena_bytes"],
            "device_weight_bytes": res.get("device_weight_bytes", 0), "seconds": time.time() - t}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", required=True)
    ap.add_argument("--out", default=".")
    ap.add_argument("--shapes", default="1x512,1x2048,8x1024")
    ap.add_argument("--logits", default="all,last",
                    help="the outputs to measure, comma separated: all (logits [batch, seq, vocab]) and last "
                    "([batch, 1, vocab], logits_to_keep=1 on both sides)")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--export", help="export into this folder (kept) instead of a temporary one")
    ap.add_argument("--profile", help="then profile carve's FLAGS (e.g. '--graph --outputs device') at each shape: "
                    "runner bench --profile's table by op category, written to profile_LOGITS_BxS.txt beside the logs")
    ap.add_argument("--variants", default="eager=--outputs device;graph=--graph --outputs device;"
                    "tight=--graph --outputs device --tight;graph-host=--graph",
                    help="carve runs as NAME=FLAGS pairs separated by ';' (FLAGS space separated, e.g. --no-fuse)")
    a = ap.parse_args()
    shapes = [tuple(int(x) for x in sh.split("x")) for sh in a.shapes.split(",")]
    modes = [m for m in a.logits.split(",") if m]
    if any(m not in ("all", "last") for m in modes):
        ap.error(f"--logits {a.logits}: want all, last or both")
    import make_fixtures as mf
    import torch

    log("torch", torch.__version__, torch.cuda.get_device_name())
    model, cfg, _ = mf.build("qwen2", big=True)
    model.to(torch.device("cuda"))
    torch.cuda.synchronize()
    weights = torch.cuda.memory_allocated()
    eager = {m: torch_eager(model, shapes, cfg.vocab_size, a.reps, m == "last", weights) for m in modes}
    model.to("cpu")
    torch.cuda.empty_cache()
    tmp = a.export or tempfile.mkdtemp(prefix="qwen_bench_")
    os.makedirs(tmp, exist_ok=True)
    paths = {}
    for m in modes:
        paths[m] = os.path.join(tmp, "qwen2_1p5b.onnx" if m == "all" else "qwen2_1p5b_last.onnx")
        export(model, paths[m], m == "last")
    del model
    variants = [v.split("=", 1) for v in a.variants.split(";") if v]
    rows = []
    for m in modes:
        for b, s in shapes:
            row = {"logits": m, "batch": b, "seq": s, "torch": eager[m][(b, s)]}
            for name, flags in variants:
                row[name] = carve(a.runner, paths[m], b, s, a.reps, flags.split())
                log(f"carve {name} logits={m} b={b} s={s}: {row[name]}")
            rows.append(row)
    print(f"\nQwen2.5-1.5B-shaped, bf16, weights {weights / 1e9:.2f} GB (torch)")
    print(f"{'logits':>6}  {'(batch, seq)':>12}  {'variant':>10}  {'torch ms':>9}  {'torch +MiB':>10}  {'carve ms':>9}  "
          f"{'carve +MiB':>10}  mem ratio  time ratio")
    for r in rows:
        e = r["torch"]
        head = f"{r['logits']:>6}  {str((r['batch'], r['seq'])):>12}"
        for name, _ in variants:
            c = r[name]
            if "error" in c:
                print(f"{head}  {name:>10}  {e['ms']:9.2f}  {e['extra_bytes'] / 2**20:10.0f}  carve failed: {c['error']}")
                continue
            print(f"{head}  {name:>10}  {e['ms']:9.2f}  {e['extra_bytes'] / 2**20:10.0f}  {c['ms']:9.2f}  "
                  f"{c['extra_bytes'] / 2**20:10.0f}  {c['extra_bytes'] / max(e['extra_bytes'], 1):9.2f}x  {c['ms'] / e['ms']:9.2f}x")
    with open(os.path.join(a.out, "qwen_bench.json"), "w") as f:
        json.dump({"weights_bytes": weights, "rows": rows, "variants": a.variants}, f, indent=1)
    if a.profile:
        for m in modes:
            for b, s in shapes:
                p = subprocess.run(bench_cmd(a.runner, paths[m], b, s, 5, ["--profile", "3"] + a.profile.split()),
                                   capture_output=True, text=True)
                with open(os.path.join(a.out, f"profile_{m}_{b}x{s}.txt"), "w") as f:
                    f.write(p.stdout + p.stderr)
                log(f"profiled logits={m} b={b} s={s}: exit {p.returncode}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""carve's runner against PyTorch eager on a Qwen2.5-1.5B-shaped model, on the GPU host.

Builds the model from a local transformers config (Qwen2.5-1.5B's sizes, 28 layers, random bf16
weights, nothing downloaded), exports it with torch.onnx.export (dynamo, dims batch and seq,
external data) into a scratch folder, then, for each (batch, seq), measures:
  - PyTorch eager: the mean latency of a forward pass (after warm-up) and the peak device memory
    beyond the weights (torch.cuda.max_memory_allocated minus the weights' bytes);
  - carve: `runner bench --device cuda` on the exported file, its p50 latency and its arena
    reservation (the device memory it holds beyond the weights, reserved at load).
Prints one table and writes qwen_bench.json beside the logs.

Usage (on the GPU host, from the folder tools/gpu/build.sh filled, with the runner built):
  PYTHONUNBUFFERED=1 python3 qwen_bench.py --runner ./runner --out $OUT [--shapes 1x512,1x2048,8x1024]
      [--variants 'eager=--outputs device;graph=--graph --outputs device;graph-host=--graph']
      [--export DIR] [--profile '--graph --outputs device']
carve's default variants leave the outputs on the device (runner bench --outputs device), as PyTorch's
forward pass leaves its logits on the GPU; graph-host copies them back to host memory each run.
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


def torch_eager(model, shapes, vocab, reps):
    import torch

    dev = torch.device("cuda")
    model.to(dev)
    torch.cuda.synchronize()
    weights = torch.cuda.memory_allocated()
    out = {}
    for b, s in shapes:
        ids = torch.randint(0, vocab, (b, s), device=dev)
        mask = torch.ones((b, s), dtype=torch.int64, device=dev)
        with torch.inference_mode():
            for _ in range(2):
                model(input_ids=ids, attention_mask=mask, use_cache=False)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            t = time.perf_counter()
            for _ in range(reps):
                model(input_ids=ids, attention_mask=mask, use_cache=False)
            torch.cuda.synchronize()
            ms = (time.perf_counter() - t) * 1000 / reps
        peak = torch.cuda.max_memory_allocated() - weights
        out[(b, s)] = {"ms": ms, "extra_bytes": peak}
        log(f"torch eager b={b} s={s}: {ms:.2f} ms, +{peak / 2**20:.0f} MiB")
    model.to("cpu")
    torch.cuda.empty_cache()
    return weights, out


def export(model, path):
    import onnx
    import make_fixtures as mf

    wrapper, names, outs = mf.Wrapper.make(model, "qwen2")
    prog, label = mf.export("qwen2-1.5b", wrapper, names, outs, 4096)
    d = os.path.dirname(path)
    raw = os.path.join(d, "raw.onnx")
    prog.save(raw, external_data=True)
    mp = onnx.load(raw, load_external_data=False)
    mp = mf.inline_functions(mf.strip(mf.rename_dims(mp, names)))
    with open(path, "wb") as f:
        f.write(mp.SerializeToString())  # the initializers still point at raw.onnx's data file
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
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--export", help="export into this folder (kept) instead of a temporary one")
    ap.add_argument("--profile", help="then profile carve's FLAGS (e.g. '--graph --outputs device') at each shape: "
                    "runner bench --profile's table by op category, written to profile_BxS.txt beside the logs")
    ap.add_argument("--variants", default="eager=--outputs device;graph=--graph --outputs device;graph-host=--graph",
                    help="carve runs as NAME=FLAGS pairs separated by ';' (FLAGS space separated, e.g. --no-fuse)")
    a = ap.parse_args()
    shapes = [tuple(int(x) for x in sh.split("x")) for sh in a.shapes.split(",")]
    import make_fixtures as mf
    import torch

    log("torch", torch.__version__, torch.cuda.get_device_name())
    model, cfg, _ = mf.build("qwen2", big=True)
    weights, eager = torch_eager(model, shapes, cfg.vocab_size, a.reps)
    tmp = a.export or tempfile.mkdtemp(prefix="qwen_bench_")
    os.makedirs(tmp, exist_ok=True)
    path = os.path.join(tmp, "qwen2_1p5b.onnx")
    export(model, path)
    del model
    variants = [v.split("=", 1) for v in a.variants.split(";") if v]
    rows = []
    for b, s in shapes:
        row = {"batch": b, "seq": s, "torch": eager[(b, s)]}
        for name, flags in variants:
            row[name] = carve(a.runner, path, b, s, a.reps, flags.split())
            log(f"carve {name} b={b} s={s}: {row[name]}")
        rows.append(row)
    print(f"\nQwen2.5-1.5B-shaped, bf16, weights {weights / 1e9:.2f} GB (torch)")
    print(f"{'(batch, seq)':>12}  {'variant':>8}  {'torch ms':>9}  {'torch +MiB':>10}  {'carve ms':>9}  {'carve +MiB':>10}  mem ratio  time ratio")
    for r in rows:
        e = r["torch"]
        for name, _ in variants:
            c = r[name]
            if "error" in c:
                print(f"{str((r['batch'], r['seq'])):>12}  {name:>8}  {e['ms']:9.2f}  {e['extra_bytes'] / 2**20:10.0f}  carve failed: {c['error']}")
                continue
            print(f"{str((r['batch'], r['seq'])):>12}  {name:>8}  {e['ms']:9.2f}  {e['extra_bytes'] / 2**20:10.0f}  {c['ms']:9.2f}  "
                  f"{c['extra_bytes'] / 2**20:10.0f}  {c['extra_bytes'] / max(e['extra_bytes'], 1):9.2f}x  {c['ms'] / e['ms']:9.2f}x")
    with open(os.path.join(a.out, "qwen_bench.json"), "w") as f:
        json.dump({"weights_bytes": weights, "rows": rows, "variants": a.variants}, f, indent=1)
    if a.profile:
        for b, s in shapes:
            p = subprocess.run(bench_cmd(a.runner, path, b, s, 5, ["--profile", "3"] + a.profile.split()),
                               capture_output=True, text=True)
            with open(os.path.join(a.out, f"profile_{b}x{s}.txt"), "w") as f:
                f.write(p.stdout + p.stderr)
            log(f"profiled b={b} s={s}: exit {p.returncode}")


if __name__ == "__main__":
    main()

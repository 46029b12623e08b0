#!/usr/bin/env python3
"""ResNet-50 and ViT-B/16 (torchvision classes, random weights, exported here, nothing
downloaded): carve's runner next to PyTorch eager, on the GPU and on the CPU.

    python3 tools/gpu/vision_bench.py --carve RUNNER --out DIR [--models resnet50,vit_b_16]
        [--batches 1,32,128] [--dtype fp32|fp16] [--caps none,0,8MiB,64MiB] [--cap-batch 32]
        [--cpu-threads 2,16] [--cpu-batch 1] [--runs N] [--no-gpu] [--conv-times FILE] [--profile N]

GPU rows: PyTorch eager with cudnn.benchmark on and channels_last (fp32 twice: with PyTorch's
default TF32 convolutions and with TF32 off, which is what carve's fp32 computes), and
`RUNNER bench --device cuda --graph --outputs device` on the exported file: p50 latency and the
memory beyond the weights (PyTorch: the forward's peak allocated less what was allocated before
it, weights and input; carve: the reserved arena, which holds every activation and workspace),
for carve's default plan (a workspace that is a choice gets what the plan leaves free at its
step) and `--full-workspace` (each such workspace at its whole bound). The cap sweep runs carve
at --cap-batch under each `--workspace-cap`, both ways, and reports time and arena per cap.
With --profile N, carve's device time by op category (`runner bench --profile N`) at
--cap-batch is printed for each model.

CPU rows: onnxruntime's CPU provider (intra-op threads = N) next to `RUNNER bench --device cpu
--workers N` on the same file, p50 latency.

Writes DIR/vision_bench.json and prints the tables.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def build(name, dtype):
    import torch
    import torchvision.models as tvm

    torch.manual_seed(0)
    m = getattr(tvm, name)(weights=None).eval()
    if hasattr(m, "heads"):
        # torchvision starts ViT's classifier at zeros, which would make every logit 0 and the
        # accuracy check compare nothing
        torch.nn.init.normal_(m.heads.head.weight, std=0.02)
    m = m.cuda()
    if dtype == "fp16":
        m = m.half()
    return m


def export(model, name, dtype, out):
    import torch

    path = os.path.join(out, f"{name}.{dtype}.onnx")
    x = torch.randn(2, 3, 224, 224, device="cuda", dtype=next(model.parameters()).dtype)
    t = time.time()
    try:
        from torch.export import Dim

        prog = torch.onnx.export(model, (x,), dynamo=True, input_names=["pixel_values"], output_names=["logits"],
                                 dynamic_shapes=({0: Dim("batch", min=1, max=1024)},), optimize=True)
        prog.save(path)
        how = "dynamo"
    except Exception as e:  # noqa: BLE001
        log(f"{name}: dynamo export failed ({type(e).__name__}: {str(e)[:200]}); TorchScript")
        torch.onnx.export(model, (x,), path, dynamo=False, input_names=["pixel_values"], output_names=["logits"],
                          dynamic_axes={"pixel_values": {0: "batch"}, "logits": {0: "batch"}}, opset_version=17)
        how = "torchscript"
    log(f"{name}: exported ({how}) in {time.time() - t:.1f}s to {path}")
    return path, how


def torch_gpu(model, name, batch, dtype, runs, tf32):
    import torch

    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    channels_last = name.startswith("resnet")
    m = model.to(memory_format=torch.channels_last) if channels_last else model
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=next(m.parameters()).dtype)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        for _ in range(5):
            m(x)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        y = m(x)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        del y
        times = []
        for _ in range(runs):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            m(x)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
    return {"p50_ms": float(np.median(times)), "peak_extra_bytes": int(peak)}


def carve_bench(runner, path, batch, device, runs, extra=(), timeout=300):
    cmd = [runner, "bench", "--model", path, "--device", device, "--dim", f"batch={batch}", "--warmup", "3",
           "--runs", str(runs), "--format", "json", *extra]
    if device.startswith("cuda"):
        cmd += ["--graph", "--outputs", "device"]
    t = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout}s", "cmd": " ".join(cmd)}
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[-800:], "rc": p.returncode, "cmd": " ".join(cmd)}
    j = json.loads(p.stdout)
    r = j.get("reservation", {})
    return {"p50_ms": j["latency_ms"]["p50"], "arena_bytes": r.get("total_arena_bytes"),
            "weight_bytes": r.get("weight_bytes"), "go_allocs_per_run": j.get("go_allocs_per_run"),
            "device_mallocs_per_run": j.get("device_mallocs_per_run"), "wall_s": round(time.time() - t, 1)}


def accuracy(runner, path, name, dtype, batch, out):
    """carve's logits on --device cuda against PyTorch's in float32 (TF32 off) on one random
    input: the largest absolute difference over the largest reference magnitude, and whether
    the top-1 classes agree. In fp16 the exported model is the half model; the reference is the
    same weights in float32."""
    import torch

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    ref = build(name, "fp32")
    if dtype == "fp16":
        ref.load_state_dict({k: v.float() for k, v in build(name, "fp16").state_dict().items()})
    g = torch.Generator().manual_seed(1)
    x = torch.randn(batch, 3, 224, 224, generator=g)
    with torch.no_grad():
        want = ref(x.cuda()).float().cpu().numpy()
    xin = os.path.join(out, f"{name}.{dtype}.in.npy")
    np.save(xin, x.numpy().astype(np.float16 if dtype == "fp16" else np.float32))
    odir = os.path.join(out, f"{name}.{dtype}.carve")
    cmd = [runner, "run", "--model", path, "--device", "cuda", "--input", f"pixel_values={xin}", "--out", odir]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[-800:]}
    got = np.load(os.path.join(odir, "logits.npy")).astype(np.float32)
    rel = float(np.abs(got - want).max() / max(1e-30, float(np.abs(want).max())))
    top1 = float((got.argmax(-1) == want.argmax(-1)).mean())
    return {"max_rel": rel, "top1_agree": top1, "batch": batch}


def ort_cpu(path, batch, threads, runs, dtype):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((batch, 3, 224, 224)).astype(np.float16 if dtype == "fp16" else np.float32)
    for _ in range(3):
        s.run(None, {"pixel_values": x})
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        s.run(None, {"pixel_values": x})
        times.append((time.perf_counter() - t) * 1e3)
    return {"p50_ms": float(np.median(times))}


def has_flag(runner, flag):
    p = subprocess.run([runner, "bench", "--help"], capture_output=True, text=True)
    return flag in p.stdout + p.stderr


def mib(b):
    return "-" if b is None else f"{b / 2**20:.1f}"


def cell(r, key="p50_ms"):
    if r is None:
        return "-"
    if "error" in r:
        return "ERR"
    return f"{r[key]:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--carve", required=True, metavar="RUNNER")
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="resnet50,vit_b_16")
    ap.add_argument("--batches", default="1,32,128")
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "fp16"])
    ap.add_argument("--caps", default="none,0,8MiB,64MiB")
    ap.add_argument("--cap-batch", type=int, default=32)
    ap.add_argument("--cpu-threads", default="2,16")
    ap.add_argument("--cpu-batch", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--no-gpu", action="store_true")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="also print carve's device time by op category over N runs at --cap-batch")
    ap.add_argument("--conv-times", metavar="FILE",
                    help="append every convolution's measured algorithms to FILE (CARVE_CONV_TIMES; "
                         "libs/kernels/cuda/convtimes.go), the estimator's recorded times")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.conv_times:
        os.environ["CARVE_CONV_TIMES"] = os.path.abspath(a.conv_times)
    import torch

    res = {"versions": {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}, "dtype": a.dtype, "rows": [],
           "caps": [], "cpu": []}
    capflag = has_flag(a.carve, "--workspace-cap")
    # the second carve column: --full-workspace where the runner has it, else --tight (older runners)
    alt, alt_name = (["--full-workspace"], "full") if has_flag(a.carve, "--full-workspace") else (["--tight"], "tight")
    res["alt"] = alt_name
    for name in a.models.split(","):
        model = build(name, a.dtype)
        weights = sum(p.numel() * p.element_size() for p in model.parameters())
        path, how = export(model, name, a.dtype, a.out)
        if not a.no_gpu:
            acc = accuracy(a.carve, path, name, a.dtype, 8, a.out)
            res.setdefault("accuracy", []).append({"model": name, **acc})
            log(name, "accuracy", json.dumps(acc))
            for b in [int(x) for x in a.batches.split(",")]:
                row = {"model": name, "batch": b, "export": how, "weights_bytes": weights}
                row["torch_tf32"] = torch_gpu(model, name, b, a.dtype, a.runs, True) if a.dtype == "fp32" else None
                row["torch"] = torch_gpu(model, name, b, a.dtype, a.runs, False)
                row["carve"] = carve_bench(a.carve, path, b, "cuda", a.runs)
                row["carve_alt"] = carve_bench(a.carve, path, b, "cuda", a.runs, alt)
                log(name, b, json.dumps(row))
                res["rows"].append(row)
            if capflag:
                for cap in a.caps.split(","):
                    extra = [] if cap == "none" else ["--workspace-cap", cap]
                    r = carve_bench(a.carve, path, a.cap_batch, "cuda", a.runs, extra)
                    rt = carve_bench(a.carve, path, a.cap_batch, "cuda", a.runs, extra + alt)
                    res["caps"].append({"model": name, "batch": a.cap_batch, "cap": cap, "default": r, "alt": rt})
                    log(name, "cap", cap, json.dumps(r), json.dumps(rt))
            if a.profile:
                cmd = [a.carve, "bench", "--model", path, "--device", "cuda", "--dim", f"batch={a.cap_batch}", "--graph",
                       "--outputs", "device", "--runs", "10", "--profile", str(a.profile)]
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
                res.setdefault("profiles", []).append({"model": name, "batch": a.cap_batch, "text": (p.stdout + p.stderr)[-6000:]})
        del model
        torch.cuda.empty_cache()
        for th in [int(x) for x in a.cpu_threads.split(",") if x]:
            o = ort_cpu(path, a.cpu_batch, th, max(5, a.runs // 3), a.dtype)
            c = carve_bench(a.carve, path, a.cpu_batch, "cpu", max(5, a.runs // 3), ["--workers", str(th)], timeout=600)
            res["cpu"].append({"model": name, "batch": a.cpu_batch, "threads": th, "ort": o, "carve": c})
            log(name, "cpu", th, json.dumps(o), json.dumps(c))
    with open(os.path.join(a.out, "vision_bench.json"), "w") as f:
        json.dump(res, f, indent=1)

    print(f"GPU ({res['versions']['gpu']}, {a.dtype}): p50 ms, memory beyond the weights MiB")
    an = res["alt"]
    print("(carve: the default reservation; " + ("full: --full-workspace, every workspace that is a choice at its whole bound)"
          if an == "full" else "tight: --tight, the workspaces the chosen algorithms need, measured at load)"))
    print(f"{'model':<10} {'batch':>5} {'torch-tf32':>10} {'torch':>8} {'carve':>8} {'x':>6} {an:>8} {'x':>6}   "
          f"{'torch MiB':>9} {'carve MiB':>9} {'x':>6} {an + ' MiB':>9} {'x':>6}")
    for r in res["rows"]:
        t, c, ct = r["torch"], r["carve"], r.get("carve_alt", {"error": "not run"})

        def ratios(c):
            if "error" in c:
                return "-", "-"
            return f"{c['p50_ms'] / t['p50_ms']:.2f}", f"{c['arena_bytes'] / max(1, t['peak_extra_bytes']):.2f}"

        (rt, mr), (rtt, mrt) = ratios(c), ratios(ct)
        print(f"{r['model']:<10} {r['batch']:>5} {cell(r['torch_tf32']):>10} {cell(t):>8} {cell(c):>8} {rt:>6} {cell(ct):>8} {rtt:>6}   "
              f"{mib(t['peak_extra_bytes']):>9} {mib(c.get('arena_bytes')):>9} {mr:>6} {mib(ct.get('arena_bytes')):>9} {mrt:>6}")
        for k, x in (("carve", c), (an, ct)):
            if "error" in x:
                print(f"    {k}: {x['error'][-300:]}")
    for r in res.get("accuracy", []):
        if "error" in r:
            print(f"{r['model']:<10} accuracy: carve failed: {r['error'][-300:]}")
        else:
            print(f"{r['model']:<10} {a.dtype} logits against PyTorch's float32 (batch {r['batch']}): "
                  f"max |diff| / max |ref| = {r['max_rel']:.2e}, top-1 agrees on {r['top1_agree']:.0%}")
    if res["caps"]:
        print(f"\nworkspace cap sweep (carve): p50 ms / arena MiB, default plan and {an}")
        for r in res["caps"]:
            d, t = r["default"], r["alt"]
            print(f"{r['model']:<10} batch {r['batch']:>3} cap {r['cap']:>6}: {cell(d)} ms / {mib(d.get('arena_bytes'))} MiB,"
                  f" {an} {cell(t)} ms / {mib(t.get('arena_bytes'))} MiB")
    elif not a.no_gpu:
        print("\nworkspace cap sweep: not run (the runner has no --workspace-cap)")
    for r in res.get("profiles", []):
        print(f"\ncarve's profile, {r['model']} batch {r['batch']}:\n{r['text']}")
    if res["cpu"]:
        print(f"\nCPU (batch {a.cpu_batch}): p50 ms, onnxruntime vs carve")
        for r in res["cpu"]:
            o, c = r["ort"], r["carve"]
            ratio = f"{c['p50_ms'] / o['p50_ms']:.2f}" if "error" not in c else "-"
            print(f"{r['model']:<10} threads {r['threads']:>2}: ort {cell(o)}  carve {cell(c)}  x {ratio}")
            if "error" in c:
                print(f"    carve: {c['error'][-300:]}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Side-by-side CPU latency of onnxruntime and carve on the same ONNX files, shapes and cores.

    tools/ortbench/ortbench.py [MODEL ...] [--shapes 1x7,3x33,8x128] [--threads N] [--runs N]
                               [--warmup N] [--carve RUNNER] [--ort auto|python|node] [--check]
                               [--format table|json]

MODEL is a fixture name of libs/graph/testmodels (default: every fixture with bindings) or a
path to an .onnx file (weights may sit beside it). For each model and (batch, seq) it times
onnxruntime's CPU provider with intra-op threads = --threads, and `runner bench --workers
--threads` on the same file and binding, and prints p50 latencies, their ratio (carve / ort)
and carve's Go heap allocations per run. A binding a model cannot take (onnxruntime refuses
it, e.g. positions past the model's table) is reported, not fatal. With --check, both also run
once on the same inputs and the table gets the largest difference of their outputs,
|carve - ort| / max(1, |ort|) (the fixtures' tests require <= 1e-4).

A GPT-2-small-shaped model (124M parameters, random weights) for the GPT-2 rows:
    go run ./tools/ortbench/gpt2gen -out /tmp/gpt2s.onnx

A ResNet-50 (torchvision's, random weights; -bn keeps BatchNormalization nodes), which has no
seq dim, so its shapes are batch sizes alone:
    go run ./tools/ortbench/resnetgen -out /tmp/resnet50.onnx
    tools/ortbench/ortbench.py /tmp/resnet50.onnx --shapes 1 --threads 2 --check

A ViT-B/16 (torchvision's, in the form of its dynamo export; random weights), likewise batch
sizes alone:
    go run ./tools/ortbench/vitgen -out /tmp/vit_b_16.onnx

onnxruntime is a benchmark peer only, never a dependency of carve. It comes from Python's
onnxruntime package where that imports (the GPU machine), else from the npm package
onnxruntime-node, installed once with
    (cd tools/ortbench && npm install --ignore-scripts)
into the git-ignored tools/ortbench/node_modules (it ships libonnxruntime for linux x64).

carve is the runner built from this checkout (go build ./apps/runner), or --carve, a runner
binary built elsewhere (the GPU machine has no Go toolchain of its own in some setups).
"""

import argparse
import array
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "libs", "graph", "testmodels", "testdata")


def fixture_names():
    with open(os.path.join(FIXTURES, "manifest.json")) as f:
        m = json.load(f)
    return sorted(x["name"] for x in m["models"] if x.get("bindings"))


def resolve(model):
    if model.endswith(".onnx") or os.sep in model:
        if not os.path.exists(model):
            sys.exit(f"ortbench: {model}: no such file")
        return os.path.splitext(os.path.basename(model))[0], os.path.abspath(model)
    p = os.path.join(FIXTURES, model + ".onnx")
    if not os.path.exists(p):
        sys.exit(f"ortbench: {model} is neither an .onnx file nor a fixture (fixtures: {', '.join(fixture_names())})")
    return model, p


def pick_ort(want):
    have_py = subprocess.run([sys.executable, "-c", "import onnxruntime"], capture_output=True).returncode == 0
    have_node = shutil.which("node") and os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node"))
    if want in ("auto", "python") and have_py:
        return "python", [sys.executable, os.path.join(HERE, "ort_py.py")]
    if want in ("auto", "node") and have_node:
        return "node", ["node", os.path.join(HERE, "ort_node.js")]
    sys.exit("ortbench: no onnxruntime: install Python's onnxruntime, or run "
             "`npm install --ignore-scripts` in tools/ortbench for onnxruntime-node")


def ort_times(cmd, path, threads, warmup, runs, shapes):
    args = cmd + [path, str(threads), str(warmup), str(runs)] + [f"{b}x{s}" for b, s in shapes]
    p = subprocess.run(args, capture_output=True, text=True)
    out = {}
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            out[(r["batch"], r["seq"])] = r
    if p.returncode != 0 and not out:
        err = (p.stderr.strip().splitlines() or ["failed"])[-1]
        return {sh: {"error": err} for sh in shapes}
    return out


def carve_time(runner, path, threads, warmup, runs, b, s):
    dims = ["--dim", f"batch={b}"] + (["--dim", f"seq={s}"] if s else [])
    args = [runner, "bench", "--model", path, *dims, "--workers", str(threads),
            "--warmup", str(warmup), "--runs", str(runs), "--format", "json"]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1]}
    r = json.loads(p.stdout)
    return {"p50_ms": r["latency_ms"]["p50"], "min_ms": r["latency_ms"]["min"], "go_allocs_per_run": r["go_allocs_per_run"]}


def read_npy(path):
    """The shape and values (a flat array) of a little-endian .npy file, without numpy."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    hlen = int.from_bytes(data[8:10], "little") if data[6] == 1 else int.from_bytes(data[8:12], "little")
    start = 10 if data[6] == 1 else 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    codes = {"<f4": "f", "<f8": "d", "<i8": "q", "<i4": "i", "|b1": "B", "|u1": "B"}
    if header["descr"] not in codes or header["fortran_order"]:
        raise ValueError(f"{path}: {header['descr']} is not supported")
    a = array.array(codes[header["descr"]])
    a.frombytes(data[start + hlen:])
    return tuple(header["shape"]), a


def check(ort_cmd, runner, path, threads, b, s, tmp):
    """Runs both once on onnxruntime's inputs; returns the largest relative output difference."""
    out = tempfile.mkdtemp(dir=tmp)
    p = subprocess.run(ort_cmd + ["--outputs", path, str(threads), f"{b}x{s}", out], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": "ort: " + (p.stderr.strip().splitlines() or ["failed"])[-1]}
    ins = [f for f in os.listdir(out) if f.startswith("in.")]
    args = [runner, "run", "--model", path, "--workers", str(threads), "--out", os.path.join(out, "carve"), "--format", "json"]
    for f in ins:
        args += ["--input", f"{f[3:-4]}={os.path.join(out, f)}"]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": "carve: " + (p.stderr.strip().splitlines() or ["failed"])[-1]}
    worst = 0.0
    for f in os.listdir(out):
        if not f.startswith("out."):
            continue
        ws, want = read_npy(os.path.join(out, f))
        gs, got = read_npy(os.path.join(out, "carve", f[4:]))
        if ws != gs:
            return {"error": f"output {f[4:-4]}: shape {gs}, onnxruntime {ws}"}
        for w, g in zip(want, got):
            d = abs(g - w) / max(1.0, abs(w))
            if not d <= worst:  # NaN counts as the worst
                worst = d if d == d else float("inf")
    return {"max_rel_diff": worst}


def build_runner(tmp):
    out = os.path.join(tmp, "runner")
    p = subprocess.run(["go", "build", "-o", out, "."], cwd=os.path.join(ROOT, "apps", "runner"))
    if p.returncode != 0:
        sys.exit("ortbench: go build ./apps/runner failed")
    return out


def shape_list(text):
    """(batch, seq) pairs; a lone B is (B, 0), a model without a seq dim (an image model)."""
    try:
        out = []
        for t in text.split(","):
            v = tuple(int(x) for x in t.split("x"))
            out.append(v if len(v) == 2 else (v[0], 0) if len(v) == 1 else None)
        if None in out:
            raise ValueError
        return out
    except ValueError:
        sys.exit(f"ortbench: --shapes {text!r}: want BxS or B[,...], e.g. 1x7,3x33 (or 1,8 for a model without seq)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", help="fixture names or .onnx paths (default: every fixture with bindings)")
    ap.add_argument("--shapes", default="1x7,3x33,8x128",
                    help="(batch x seq) bindings, comma-separated; a lone batch (1,8) for a model without seq")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="cores for both runtimes")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--carve", help="runner binary (default: build ./apps/runner)")
    ap.add_argument("--ort", choices=["auto", "python", "node"], default="auto")
    ap.add_argument("--check", action="store_true", help="also compare outputs on the same inputs")
    ap.add_argument("--format", choices=["table", "json"], default="table")
    a = ap.parse_args()
    shapes = shape_list(a.shapes)
    models = [resolve(m) for m in (a.models or fixture_names())]
    kind, ort_cmd = pick_ort(a.ort)
    with tempfile.TemporaryDirectory() as tmp:
        runner = a.carve or build_runner(tmp)
        rows = []
        for name, path in models:
            ort = ort_times(ort_cmd, path, a.threads, a.warmup, a.runs, shapes)
            for b, s in shapes:
                o = ort.get((b, s), {"error": "no result"})
                c = carve_time(runner, path, a.threads, a.warmup, a.runs, b, s)
                row = {"model": name, "batch": b, "seq": s, "ort": o, "carve": c}
                if a.check and "p50_ms" in o:
                    row["check"] = check(ort_cmd, runner, path, a.threads, b, s, tmp)
                if "p50_ms" in o and "p50_ms" in c:
                    row["ratio"] = c["p50_ms"] / o["p50_ms"]
                rows.append(row)
                if a.format == "table":
                    print_row(row, first=len(rows) == 1, kind=kind, threads=a.threads, check=a.check)
    if a.format == "json":
        json.dump({"ort": kind, "threads": a.threads, "rows": rows}, sys.stdout, indent=1)
        print()


def print_row(r, first, kind, threads, check):
    if first:
        print(f"onnxruntime ({kind}) vs carve, {threads} threads, p50 ms")
        print(f"{'model':<18} {'(b, s)':<10} {'ort':>9} {'carve':>9} {'ratio':>7} {'allocs':>6}" + (f" {'maxrel':>8}" if check else ""))
    o, c = r["ort"], r["carve"]
    def ms(x):
        return f"{x['p50_ms']:9.3f}" if "p50_ms" in x else f"{'-':>9}"
    ratio = f"{r['ratio']:6.2f}x" if "ratio" in r else f"{'-':>7}"
    allocs = f"{c['go_allocs_per_run']:6.1f}" if "go_allocs_per_run" in c else f"{'-':>6}"
    line = f"{r['model']:<18} {'(%d, %d)' % (r['batch'], r['seq']):<10} {ms(o)} {ms(c)} {ratio} {allocs}"
    k = r.get("check", {})
    if check:
        line += f" {k['max_rel_diff']:8.1e}" if "max_rel_diff" in k else f" {'-':>8}"
    errs = [f"{who}: {x['error'][:100]}" for who, x in (("ort", o), ("carve", c), ("check", k)) if "error" in x]
    if errs:
        line += "  " + "; ".join(errs)
    print(line, flush=True)


if __name__ == "__main__":
    main()

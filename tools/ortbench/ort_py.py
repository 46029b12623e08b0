#!/usr/bin/env python3
"""Times onnxruntime CPU (the Python package) on one ONNX file at several (batch, seq) bindings.

ortbench.py calls it where Python's onnxruntime is installed (the GPU machine); ort_node.js is
the same for the npm package. It prints one JSON object per binding:
{"batch", "seq", "p50_ms", "min_ms", "mean_ms", "runs"}.

    python3 ort_py.py MODEL.onnx THREADS WARMUP RUNS B1xS1 [B2xS2 ...]
    python3 ort_py.py --outputs MODEL.onnx THREADS BxS DIR

The second form runs once and writes the inputs and outputs as DIR/in.NAME.npy and
DIR/out.NAME.npy, for ortbench.py --check.

Inputs follow inputs.js's rule: inputs named like a mask are 1, input_ids cycle through small
ids, other integers are 0, floats are sin(0.37 * i); dims named "batch" take B, other symbolic
dims S.
"""

import json
import sys
import time

import numpy as np
import onnxruntime as ort

DTYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(float)": np.float32}


def make_input(meta, b, s):
    shape = [d if isinstance(d, int) and d >= 0 else (b if d == "batch" else s) for d in meta.shape]
    if meta.type not in DTYPES:
        raise SystemExit(f"ort_py: input {meta.name}: type {meta.type} is not supported")
    dt = DTYPES[meta.type]
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.float64)
    if "mask" in meta.name.lower():
        v = np.ones(n)
    elif dt == np.float32:
        v = np.sin(0.37 * i)
    elif "input_ids" in meta.name.lower():
        v = (7 * i + 3) % 50
    else:
        v = np.zeros(n)
    return v.astype(dt).reshape(shape)


def session(model, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def outputs(model, threads, bs, out):
    import os
    sess = session(model, threads)
    b, s = (int(x) for x in bs.split("x"))
    feeds = {m.name: make_input(m, b, s) for m in sess.get_inputs()}
    for name, v in feeds.items():
        np.save(os.path.join(out, f"in.{name}.npy"), v)
    for meta, v in zip(sess.get_outputs(), sess.run(None, feeds)):
        np.save(os.path.join(out, f"out.{meta.name}.npy"), v)


def main():
    if sys.argv[1] == "--outputs":
        outputs(*sys.argv[2:])
        return
    model, threads, warmup, runs, *shapes = sys.argv[1:]
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    for bs in shapes:
        b, s = (int(x) for x in bs.split("x"))
        try:
            time_one(sess, b, s, int(warmup), int(runs))
        except Exception as e:  # noqa: BLE001 (a binding the model cannot take is reported)
            print(json.dumps({"batch": b, "seq": s, "error": str(e).splitlines()[0]}), flush=True)


def time_one(sess, b, s, warmup, runs):
    feeds = {m.name: make_input(m, b, s) for m in sess.get_inputs()}
    for _ in range(warmup):
        sess.run(None, feeds)
    lat = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        lat.append((time.perf_counter() - t0) * 1e3)
    lat.sort()
    print(json.dumps({"batch": b, "seq": s, "p50_ms": lat[(len(lat) - 1) // 2], "min_ms": lat[0],
                      "mean_ms": sum(lat) / len(lat), "runs": len(lat)}), flush=True)


if __name__ == "__main__":
    main()

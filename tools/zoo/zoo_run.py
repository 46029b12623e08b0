"""What the zoo scripts (make_zoo.py, make_zoo_kv.py, make_zoo_vision.py) share: running one
function per family in worker processes, collecting their models and failures into a manifest,
and packing the output folder for import_zoo.py; and removing a model's files when its export
turns out unusable, so that no half-made model is imported."""

import concurrent.futures as cf
import json
import multiprocessing
import os
import tarfile
import time
import traceback

T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


def drop(outdir, name):
    """Removes every file of model name (name.onnx, name.b0.in.x.npy, ...) from outdir."""
    for fn in os.listdir(outdir):
        if fn.startswith(name + "."):
            os.remove(os.path.join(outdir, fn))


def run(one, fams, out, folder, versions, jobs):
    """Runs one(family, outdir) -> (models, failures) for every family in worker processes
    (spawned: torch and onnxruntime threads do not survive a fork), writes out/folder's
    manifest.json and packs out/folder into out/folder.tgz. A worker that dies is a failure of
    its family. Returns the manifest."""
    outdir = os.path.join(out, folder)
    os.makedirs(outdir, exist_ok=True)
    manifest = {"versions": versions, "models": [], "failures": []}
    with cf.ProcessPoolExecutor(max_workers=max(1, min(jobs, len(fams))),
                                mp_context=multiprocessing.get_context("spawn")) as ex:
        futs = {ex.submit(one, f, outdir): f for f in fams}
        for fut in cf.as_completed(futs):
            f = futs[fut]
            try:
                e, fl = fut.result()
            except Exception:  # noqa: BLE001
                e, fl = [], [{"family": f, "step": "worker", "error": traceback.format_exc()[-1500:]}]
            manifest["models"] += e
            manifest["failures"] += fl
            log(f"{f}: {len(e)} models, {len(fl)} failures")
    manifest["models"].sort(key=lambda m: m["name"])
    manifest["failures"].sort(key=lambda m: (m["family"], m["step"]))
    with open(os.path.join(outdir, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)
    with tarfile.open(os.path.join(out, folder + ".tgz"), "w:gz") as tar:
        tar.add(outdir, arcname=folder)
    total = sum(os.path.getsize(os.path.join(outdir, x)) for x in os.listdir(outdir))
    log(f"done: {len(manifest['models'])} models, {len(manifest['failures'])} failures, {total / 1e6:.1f} MB")
    for fl in manifest["failures"]:
        log("FAIL", fl["step"], fl["error"][:400].replace("\n", " "))
    return manifest

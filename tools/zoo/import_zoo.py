#!/usr/bin/env python3
"""Replaces libs/graph/testmodels/zoo/testdata with make_zoo.py's zoo.tgz, merging in any
further archives (make_zoo_kv.py's zoo_kv.tgz): their files are added and their manifests'
models and failures appended. With --add, the zoo is kept and the archives merged into it: a
model or failure of the same name (step) is replaced, so a partial run (make_zoo_kv.py --only)
updates its families alone. Needs only the Python standard library.

Usage: python3 tools/zoo/import_zoo.py zoo.tgz [zoo_kv.tgz ...]
       python3 tools/zoo/import_zoo.py --add zoo_kv.tgz [...]
"""
import io
import json
import os
import shutil
import sys
import tarfile

KEEP = (".onnx", ".npy", ".json")


def merge(merged, manifest):
    """Merges manifest into merged, its models and failures replacing those of the same name."""
    names = {m["name"] for m in manifest["models"]} | {f["step"] for f in manifest["failures"]}
    built = {m["family"] for m in manifest["models"]}  # a family built now has no build failure left
    merged["models"] = [m for m in merged["models"] if m["name"] not in names] + manifest["models"]
    merged["failures"] = [f for f in merged["failures"] if f["step"] not in names
                          and not (f["step"] in ("build", "worker") and f["family"] in built)] + manifest["failures"]


def main():
    args = sys.argv[1:]
    add = bool(args) and args[0] == "--add"
    if add:
        args = args[1:]
    if not args:
        sys.exit(__doc__)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    dst = os.path.join(root, "libs", "graph", "testmodels", "zoo", "testdata")
    merged = None
    if add:
        with open(os.path.join(dst, "manifest.json")) as f:
            merged = json.load(f)
    else:
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(dst)
    n = 0
    for tgz in args:
        manifest = None
        with tarfile.open(tgz) as tf:
            for m in tf.getmembers():
                name = os.path.basename(m.name)
                if not m.isfile() or name.startswith(".") or not name.endswith(KEEP):
                    continue
                data = tf.extractfile(m).read()
                if name == "manifest.json":
                    manifest = json.load(io.BytesIO(data))
                    continue
                with open(os.path.join(dst, name), "wb") as f:
                    f.write(data)
                n += 1
        if manifest is None:
            sys.exit(f"{tgz}: no manifest.json")
        if merged is None:
            merged = manifest
        else:
            merge(merged, manifest)
    merged["models"].sort(key=lambda m: m["name"])
    with open(os.path.join(dst, "manifest.json"), "w") as f:
        json.dump(merged, f, indent=1, sort_keys=True)
    print(f"{n} files and a manifest of {len(merged['models'])} models into {dst}")


if __name__ == "__main__":
    main()

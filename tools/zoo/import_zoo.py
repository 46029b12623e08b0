#!/usr/bin/env python3
"""Replaces libs/graph/testmodels/zoo/testdata with make_zoo.py's zoo.tgz, merging in any
further archives (make_zoo_kv.py's zoo_kv.tgz): their files are added and their manifests'
models and failures appended. Needs only the Python standard library.

Usage: python3 tools/zoo/import_zoo.py zoo.tgz [zoo_kv.tgz ...]
"""
import io
import json
import os
import shutil
import sys
import tarfile

KEEP = (".onnx", ".npy", ".json")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    dst = os.path.join(root, "libs", "graph", "testmodels", "zoo", "testdata")
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    merged = None
    n = 0
    for tgz in sys.argv[1:]:
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
            merged["models"] += manifest["models"]
            merged["failures"] += manifest["failures"]
    merged["models"].sort(key=lambda m: m["name"])
    with open(os.path.join(dst, "manifest.json"), "w") as f:
        json.dump(merged, f, indent=1, sort_keys=True)
    print(f"{n} files and a manifest of {len(merged['models'])} models into {dst}")


if __name__ == "__main__":
    main()

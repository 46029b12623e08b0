#!/usr/bin/env python3
"""Replaces libs/graph/testmodels/zoo/testdata with the contents of make_zoo.py's zoo.tgz.
Needs only the Python standard library.

Usage: python3 tools/zoo/import_zoo.py zoo.tgz
"""
import os
import shutil
import sys
import tarfile

KEEP = (".onnx", ".npy", ".json")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    dst = os.path.join(root, "libs", "graph", "testmodels", "zoo", "testdata")
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    n = 0
    with tarfile.open(sys.argv[1]) as tf:
        for m in tf.getmembers():
            name = os.path.basename(m.name)
            if m.isfile() and not name.startswith(".") and name.endswith(KEEP):
                with open(os.path.join(dst, name), "wb") as f:
                    f.write(tf.extractfile(m).read())
                n += 1
    if not os.path.exists(os.path.join(dst, "manifest.json")):
        sys.exit(f"{sys.argv[1]}: no manifest.json")
    print(f"{n} files into {dst}")


if __name__ == "__main__":
    main()

#!/bin/bash
# Compiles the CUDA kernels for `go build -tags cuda` / `go test -tags cuda`: every
# libs/kernels/cuda/csrc/*.cu becomes libs/kernels/cuda/fatbin/<name>.fatbin (git-ignored), with
# sm_90a machine code and compute_90 PTX (which newer GPUs compile at load), and fatbins of
# deleted sources are removed. Bazel does the same itself (cuda_fatbins, --config=cuda).
# Skips a file whose fatbin is newer than it and than every csrc/*.cuh. Needs the toolchain of
# tools/cuda/headers.sh (run first, once).
set -euo pipefail
cd "$(dirname "$0")/../.."
eval "$(tools/cuda/headers.sh)"
src=libs/kernels/cuda/csrc
out=libs/kernels/cuda/fatbin
# Keep in step with NVCC_FATBIN_FLAGS in tools/cuda/defs.bzl.
flags=(-fatbin -O3 -std=c++17 -Xptxas=-warn-spills
  -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_90,code=compute_90)
mkdir -p "$out"
shopt -s nullglob
for f in "$out"/*.fatbin; do
  [ -f "$src/$(basename "$f" .fatbin).cu" ] || rm -f "$f"
done
newest_hdr=
for h in "$src"/*.cuh; do
  [ -z "$newest_hdr" ] || [ "$h" -nt "$newest_hdr" ] && newest_hdr=$h
done
built=0
for cu in "$src"/*.cu; do
  fb="$out/$(basename "$cu" .cu).fatbin"
  if [ -f "$fb" ] && [ "$fb" -nt "$cu" ] && { [ -z "$newest_hdr" ] || [ "$fb" -nt "$newest_hdr" ]; }; then
    continue
  fi
  echo "nvcc $cu" >&2
  "$CARVE_NVCC" "${flags[@]}" -I"$src" -o "$fb.tmp" "$cu"
  mv "$fb.tmp" "$fb"
  built=$((built + 1))
done
echo "kernels.sh: $built fatbin(s) built, $(ls "$out"/*.fatbin | wc -l) in $out" >&2

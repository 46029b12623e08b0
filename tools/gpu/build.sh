#!/bin/bash
# Builds everything the GPU tests need into one folder (default .gpu/, git-ignored) for a GPU
# host that has no Go toolchain: the kernels' fatbins (tools/cuda/kernels.sh), every package's
# cuda test binary (go test -c -tags cuda, stripped and xz-compressed, a third the size of gzip: the
# device tool carries at most 64 MiB with the checkout), the apps named in TOOLS (cuda builds; default none, for
# example TOOLS=apps/runner), and run.sh, which runs them all there:
#   tools/gpu/build.sh [DIR]   then, on the GPU host:   bash DIR/run.sh
# Binaries built here (glibc 2.36) link only libc; at run time --device cuda loads libcuda.so.1
# and libcublasLt (dlopen), and without them the runner still runs --device cpu.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-.gpu}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
eval "$(tools/cuda/headers.sh)"
tools/cuda/kernels.sh
rm -f "$dir"/*.test "$dir"/*.bin "$dir"/*.gz "$dir"/*.xz "$dir"/*.dir
# Packages with cuda-tagged tests.
pkgs=$(grep -rl --include='*_test.go' '^//go:build cuda' libs apps 2>/dev/null | xargs -r -n1 dirname | sort -u)
for p in $pkgs; do
  name=$(echo "$p" | tr / _)
  echo "go test -c -tags cuda ./$p" >&2
  nice go test -c -tags cuda -ldflags='-s -w' -o "$dir/$name.test" "./$p"
  xz -6 -T2 -f "$dir/$name.test"
  echo "$p" > "$dir/$name.dir" # run.sh runs it in its package's folder, as go test does
done
# The apps, as a GPU host runs them.
for app in ${TOOLS:-}; do
  echo "go build -tags cuda ./$app" >&2
  nice go build -tags cuda -ldflags='-s -w' -o "$dir/$(basename "$app").bin" "./$app"
  xz -6 -T2 -f "$dir/$(basename "$app").bin"
done
cp tools/gpu/run.sh "$dir/run.sh"
# The benchmarks against PyTorch, with the fixture scripts whose model builders and exporters they use.
cp tools/gpu/all.sh tools/gpu/qwen_bench.py tools/gpu/demo.sh tools/fixtures/make_fixtures.py \
  tools/gpu/decode_bench.py tools/fixtures/gqa_builder.py "$dir/"
du -ch "$dir"/* | sort -h >&2
total=$(du -sm "$dir" | cut -f1)
checkout=$(( $(git ls-files -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1) / 1048576 ))
if [ $((total + checkout)) -ge 62 ]; then
  echo "build.sh: $dir is $total MiB and the checkout $checkout MiB; the device tool carries at most 64 MiB in all" >&2
  exit 1
fi

#!/bin/bash
# Runs every test binary beside this script (xz-compressed by build.sh) on a GPU host (no Go needed),
# then the GEMM benchmarks; full logs go to $OUT (the device tool's output folder) or ./gpu-logs, and a
# summary to stdout. Exit status 0 only when every binary passed.
#   BENCH=regexp  benchmarks to run (default GemmQwen; empty: none)
#   RUN=regexp    tests to run (default all)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/gpu-logs}
mkdir -p "$out"
# libcuda.so.1 and cuBLASLt (CUDA 13's libcublasLt.so.13) on the GPU host.
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
if ! ldconfig -p 2>/dev/null | grep -q libcublasLt.so.13 && ! ls /usr/local/cuda/lib64/libcublasLt.so.13 >/dev/null 2>&1; then
  lt=$(find / -name 'libcublasLt.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$lt" ] && export LD_LIBRARY_PATH="$(dirname "$lt"):$LD_LIBRARY_PATH"
fi
# Unpack the binaries (and apps) into a scratch folder; tests run there.
bin=$(mktemp -d)
# unxz: xz if the host has it, else Python's lzma (the GPU host always has Python).
unxz() { xz -dc "$1" 2>/dev/null || python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"; }
for z in "$here"/*.xz; do
  unxz "$z" > "$bin/$(basename "$z" .xz)" && chmod +x "$bin/$(basename "$z" .xz)"
done
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$out/gpu.txt"
failed=0
for t in "$bin"/*.test; do
  name=$(basename "$t" .test)
  start=$(date +%s%N)
  # In its package's folder of the checkout beside this folder (the device tool sends it), as go
  # test runs it: tests read testdata and sources relative to it.
  wd=$bin
  [ -f "$here/$name.dir" ] && [ -d "$here/../$(cat "$here/$name.dir")" ] && wd="$here/../$(cat "$here/$name.dir")"
  (cd "$wd" && "$t" -test.v -test.count=1 ${RUN:+-test.run "$RUN"}) > "$out/$name.log" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  pass=$(grep -c -- '^\s*--- PASS' "$out/$name.log")
  fail=$(grep -c -- '^\s*--- FAIL' "$out/$name.log")
  skip=$(grep -c -- '^\s*--- SKIP' "$out/$name.log")
  status=ok; [ $rc -eq 0 ] || { status=FAIL; failed=$((failed + 1)); }
  printf '%-28s %-4s %3d passed %3d failed %3d skipped  %d.%03ds\n' "$name" "$status" "$pass" "$fail" "$skip" $((ms / 1000)) $((ms % 1000))
  # Figures the tests log, and the failures.
  grep -E 'driver allocations|shared workspace|algorithm uses|W = R|Go heap|target |device \{' "$out/$name.log" | sed 's/^ */    /' | cut -c1-220
  if [ $rc -ne 0 ]; then
    grep -B2 -A12 -E -- '--- FAIL|^panic|^FAIL' "$out/$name.log" | head -60 | sed 's/^/    | /'
  fi
done
bench=${BENCH-GemmQwen}
if [ -n "$bench" ]; then
  for t in "$bin"/*.test; do
    name=$(basename "$t" .test)
    (cd "$bin" && "$t" -test.run '^$' -test.bench "$bench" -test.benchtime 20x) > "$out/$name.bench.log" 2>&1 || failed=$((failed + 1))
    grep -E '^Benchmark' "$out/$name.bench.log" | awk '{
      line = $1; for (i = 2; i <= NF; i++) if ($(i) ~ /TFLOP|GB\/s|us\/gemm|ws_MiB/) line = line "  " $(i-1) " " $(i); print line }'
    grep -E '^(FAIL|panic)' "$out/$name.bench.log"
  done
fi
echo "run.sh: $failed failed; logs in $out"
[ $failed -eq 0 ]

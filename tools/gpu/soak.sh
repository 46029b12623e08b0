#!/bin/bash
# Soak test: one runner process with several sessions on one GPU for a given time, its memory
# sampled every few seconds; fails if memory grows after warm-up. On the GPU host, from the
# repository root:
#   tools/gpu/soak.sh [-d SECONDS] [-i INTERVAL] [-w WARMUP] [-o CSV] [-- RUNNER BENCH FLAGS]
#     -d  how long the timed runs last (default 600: ten minutes)
#     -i  seconds between samples (default 5)
#     -w  seconds of warm-up left out of the check (default 30, or a tenth of -d if less)
#     -o  the samples (default soak.csv); the runner's own samples and report lie beside it
#         (.runner.csv, .json)
#   RUNNER   a cuda build of the runner (default /tmp/carve-runner, else .gpu/runner.bin.xz
#            unpacked there)
#   TOL_MIB  device memory growth allowed after warm-up, in MiB (default 0)
#   SHARED_GPU=1  other programs use the GPU during the soak (tools/gpu/all.sh's soak-start runs
#            the GPU tests beside it): the whole GPU's used memory is reported but not checked,
#            and process_mib is checked only where nvidia-smi sees the runner's own PID
# Default bench flags: the qwen2 fixture, 4 sessions on cuda:0, batch 3, seq 16.
# It runs `runner bench --duration -d --samples` (the allocator's segment, allocated and arena
# bytes and its device mallocs, every -i) and, beside it, samples nvidia-smi: the runner
# process's used memory (the GPU's compute processes' sum when the PID namespace hides the
# process) and the whole GPU's. Each row of the CSV: elapsed_s, the runner's last sample, then
# process_mib and gpu_used_mib. After warm-up, the allocator's segment bytes and device mallocs
# must not change and the MiB figures must not grow more than TOL_MIB; the summary says so and
# the exit status is 0 only then.
set -uo pipefail
dur=600 every=5 warm= out=soak.csv
while getopts "d:i:w:o:" o; do
  case $o in d) dur=$OPTARG ;; i) every=$OPTARG ;; w) warm=$OPTARG ;; o) out=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
warm=${warm:-$((dur / 10 < 30 ? dur / 10 : 30))}
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(--device cuda:0 --concurrency 4 --model libs/graph/testmodels/testdata/qwen2.onnx --dim batch=3 --dim seq=16)
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
runner=${RUNNER:-/tmp/carve-runner}
if [ ! -x "$runner" ] && [ -f .gpu/runner.bin.xz ]; then
  { xz -dc .gpu/runner.bin.xz 2>/dev/null || python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' .gpu/runner.bin.xz; } > "$runner" && chmod +x "$runner"
fi
[ -x "$runner" ] || { echo "soak: no runner at $runner (set RUNNER)" >&2; exit 2; }
base=${out%.csv}
echo "soak: runner bench ${flags[*]} for ${dur}s, sampled every ${every}s, ${warm}s warm-up"

"$runner" bench "${flags[@]}" --duration "${dur}s" --sample-every "${every}s" --samples "$base.runner.csv" \
  --format json > "$base.json" 2> "$base.err" &
pid=$!
start=$(date +%s)
header=
while kill -0 "$pid" 2>/dev/null; do
  sleep "$every"
  [ -s "$base.runner.csv" ] || continue
  if [ -z "$header" ]; then
    header="soak_elapsed_s,$(head -1 "$base.runner.csv"),process_mib,gpu_used_mib"
    echo "$header" > "$out"
  fi
  procs=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null)
  gpu=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | head -1)
  last=$(tail -1 "$base.runner.csv")
  [[ $last == elapsed_s* ]] && continue
  # A sample taken as the runner ends (its last row is the timed runs' end, -d) sees it
  # releasing memory: left out.
  awk -F, -v d="$dur" '{exit !($1 < d)}' <<<"$last" || continue
  kill -0 "$pid" 2>/dev/null || continue
  mine=$(awk -F', *' -v p="$pid" '$1 == p {print $2}' <<<"$procs")
  if [ -n "$mine" ]; then
    pidseen=1
  else
    mine=$(awk -F', *' '{s += $2} END {print s + 0}' <<<"$procs")
  fi
  echo "$(($(date +%s) - start)),$last,$mine,$gpu" >> "$out"
done
if [ -n "${pidseen:-}" ]; then
  echo "soak: process_mib is the runner's own (nvidia-smi sees its PID)"
else
  echo "soak: process_mib is the sum over the GPU's compute processes (nvidia-smi does not see the runner's PID: another PID namespace)"
fi
wait "$pid"
rc=$?
if [ $rc -ne 0 ]; then
  echo "soak: the runner failed (exit $rc): $(tail -3 "$base.err")" >&2
  exit 1
fi

python3 - "$out" "$base.json" "$warm" "${TOL_MIB:-0}" "${SHARED_GPU:-}" "${pidseen:-}" <<'PY'
import csv, json, sys
path, report, warm, tol = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
shared, own = sys.argv[5] == "1", sys.argv[6] == "1"
if shared:
    print("the GPU is shared with other programs: gpu_used_mib is not checked" +
          ("" if own else ", nor process_mib (the runner's PID is hidden: it sums every process)"))
rows = list(csv.DictReader(open(path)))
after = [r for r in rows if float(r["elapsed_s"]) >= warm]
ok = True
print(f"samples: {len(rows)}, over {rows[-1]['elapsed_s'] if rows else 0} s of timed runs; {len(after)} after the {warm:.0f} s warm-up")
if len(after) < 2:
    print("FAIL: too few samples after warm-up"); ok = False
for k, limit, unit in (("segment_bytes", 0, "B"), ("device_mallocs", 0, ""),
                       ("process_mib", None if shared and not own else tol, "MiB"), ("gpu_used_mib", None if shared else tol, "MiB"),
                       ("arena_bytes", 0, "B"), ("go_heap_bytes", None, "B")):
    if len(after) < 2 or k not in rows[0]:
        continue
    v = [float(r[k]) for r in after]
    growth = max(v) - v[0]
    print(f"{k:15} first {float(rows[0][k]):.0f}  after warm-up {v[0]:.0f}  min {min(v):.0f}  max {max(v):.0f}  last {v[-1]:.0f}  growth {growth:.0f} {unit}")
    if limit is not None and growth > limit:
        print(f"  FAIL: {k} grew by {growth:.0f} {unit} after warm-up (allowed {limit:.0f})"); ok = False
d = json.load(open(report))
print(f"runner: {d['runs']} runs on {d['sessions']} sessions in {d['wall_seconds']:.1f} s ({d['runs_per_second']:.0f}/s), "
      f"p50 {d['latency_ms']['p50']:.3f} ms, p99 {d['latency_ms']['p99']:.3f} ms, device mallocs per timed run {d['device_mallocs_per_run']}")
if d["device_mallocs_per_run"] != 0:
    print("  FAIL: the timed runs made device mallocs"); ok = False
print("soak: " + ("ok, memory flat after warm-up" if ok else "FAILED"))
sys.exit(0 if ok else 1)
PY

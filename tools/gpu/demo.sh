#!/bin/bash
# The runner (a cuda build) on the fixture models, as an operator runs it on a GPU host: for each
# model `runner bench` on the GPU eager, on the GPU with --graph, and on the CPU, with the
# reservation and allocation figures, then one `runner run --device cuda --stats table`.
#   bash demo.sh RUNNER   (from the repository root; JSON under $OUT or ./gpu-logs)
set -uo pipefail
runner=$1
out=${OUT:-gpu-logs}
mkdir -p "$out"
models=${MODELS:-gpt2 gpt2_fused qwen2 qwen2_q4 llama bert bert_fused}
printf '%-11s %-12s %9s %9s %10s %12s %s\n' MODEL DEVICE P50_MS RUNS/S ARENA MALLOCS/RUN GO_ALLOCS/RUN
for m in $models; do
  for dev in cuda "cuda --graph" cpu; do
    tag=${dev// /}
    tag=${tag//--/_}
    if ! "$runner" bench --model "libs/graph/testmodels/testdata/$m.onnx" --dim batch=3 --dim seq=16 --device $dev \
      --runs 200 --format json > "$out/bench_${m}_${tag}.json" 2> "$out/bench_${m}_${tag}.err"; then
      printf '%-11s %-12s FAILED: %s\n' "$m" "$dev" "$(tail -1 "$out/bench_${m}_${tag}.err")"
      continue
    fi
    python3 - "$out/bench_${m}_${tag}.json" "$m" "$dev" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:<11} {sys.argv[3]:<12} {d['latency_ms']['p50']:9.3f} {d['runs_per_second']:9.0f} "
      f"{d['reservation']['arena_bytes'] / 2**20:9.2f}M {d['device_mallocs_per_run']:12.0f} {d['go_allocs_per_run']:.1f}")
PY
  done
done
"$runner" run --model libs/graph/testmodels/testdata/qwen2.onnx --dim batch=3 --dim seq=16 --device cuda --graph \
  --repeat 100 --stats table 2>&1 | tee "$out/run_qwen2_cuda.txt"

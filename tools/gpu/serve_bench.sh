#!/bin/bash
# `runner serve` under load on a GPU host: exports a Qwen2.5-1.5B-shaped model in onnxruntime
# GenAI's GQA form (tools/gpu/decode_bench.py: bf16, random weights, nothing downloaded), serves
# it with continuous batching over --slots rows reserved at load (--device cuda --graph), drives
# it with `runner loadtest` at 1, 8, 32 and 64 concurrent streams (prompt 512 tokens, 128 new),
# and reads the server's reserved and used device bytes from /metrics. Then SIGTERM drains it.
#   tools/gpu/serve_bench.sh RUNNER [OUT]     (OUT defaults to $OUT, else ./serve-bench)
# Environment: SLOTS (64), CONTEXT (1024), CHUNK (the prompt chunk, 256), LEVELS (1,8,32,64),
# REQUESTS (per level, 128), DURATION (per level, 20s), LAYERS (28), MODEL_DIR (/tmp/qwen-serve).
set -uo pipefail
runner=${1:?usage: serve_bench.sh RUNNER [OUT]}
out=${2:-${OUT:-./serve-bench}}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
dir=${MODEL_DIR:-/tmp/qwen-serve}
slots=${SLOTS:-64} ctx=${CONTEXT:-1024} chunk=${CHUNK:-256}
addr=127.0.0.1:${PORT:-8000}
if [ ! -f "$dir/model.onnx" ]; then
  python3 "$here/decode_bench.py" --export "$dir" --max-seq "$ctx" --layers "${LAYERS:-28}" --out "$out" > "$out/export.log" 2>&1 ||
    { echo "serve_bench: the export failed:"; tail -20 "$out/export.log"; exit 1; }
fi
"$runner" serve --model "$dir/model.onnx" --device cuda --graph --slots "$slots" --context "$ctx" \
  --prefill-chunk "$chunk" --addr "$addr" > "$out/serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
# Ready once the reservation and the warm-up are done (a poll of the probe, not a timing).
for _ in $(seq 1 600); do
  curl -sf "http://$addr/v2/health/ready" > /dev/null && break
  kill -0 $pid 2>/dev/null || { echo "serve_bench: the server exited:"; tail -30 "$out/serve.log"; exit 1; }
  sleep 1
done
curl -sf "http://$addr/v2/health/ready" > /dev/null || { echo "serve_bench: not ready after 600 s"; tail -30 "$out/serve.log"; exit 1; }
echo "server ready: $(grep -m1 -i 'reserv' "$out/serve.log")"
curl -s "http://$addr/metrics" | grep -E '^carve:(reserved|num_slots|kv_cache)' > "$out/metrics.before.txt"
# what the process holds on the device: carve's reservation, the CUDA context, the libraries' own
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader > "$out/nvidia-smi.before.txt" 2>&1
"$runner" loadtest --url "http://$addr" --concurrency "${LEVELS:-1,8,32,64}" --requests "${REQUESTS:-128}" \
  --duration "${DURATION:-20s}" --prompt-len 512 --max-tokens 128 --format json > "$out/loadtest.json" 2> "$out/loadtest.err"
rc=$?
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader > "$out/nvidia-smi.after.txt" 2>&1
curl -s "http://$addr/metrics" | grep -E '^carve:' > "$out/metrics.after.txt"
kill -TERM $pid
wait $pid
echo "server exit status after SIGTERM: $?"
trap - EXIT
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
try:
    j = json.load(open(os.path.join(out, "loadtest.json")))
except Exception as e:  # noqa: BLE001
    print("loadtest.json unreadable:", e, open(os.path.join(out, "loadtest.err")).read()[-2000:])
    sys.exit(0)
print(json.dumps(j, indent=1)[:6000])
PY
grep -E 'reserved_bytes|num_slots|kv_cache|batch_steps' "$out/metrics.after.txt" | head -20
echo "device memory held by the process (nvidia-smi, before and after the load): $(cat "$out/nvidia-smi.before.txt") / $(cat "$out/nvidia-smi.after.txt")"
tail -5 "$out/serve.log"
exit $rc

#!/bin/bash
# One GPU session's whole batch, so every session runs the GPU work the same way. On the GPU host,
# from the repository root of the checkout the device tool sent, with the folder tools/gpu/build.sh
# filled (TOOLS=apps/runner) carried as .gpu:
#   bash .gpu/all.sh [STEPS]      STEPS: any of suite replicas generate decode graphs qwen ortbench
#                                 gpt2 (default: all of them), attnbench (the prefill attention
#                                 kernel alone, TFLOP/s)
#                                 and soak (not in the default: tools/gpu/soak.sh for SOAK_S
#                                 seconds, default 540, which one 600-second device call holds),
#                                 or soak+cpu: the soak pinned to the last 4 cores while ortbench
#                                 and gpt2 run at the other cores' thread count beside it;
#                                 or soak-start ... soak-wait, which may span two device calls: soak-start
#                                 starts the soak in a process session of its own (it outlives the
#                                 call while the machine stays warm: make the next call at once)
#                                 pinned to the last 4 cores, with SHARED_GPU=1 (soak.sh), after every
#                                 other step of its call; the steps of the calls after it run beside it
#                                 (tests, not timings); soak-wait waits for it to end and prints its
#                                 summary (SOAK_S, default 600)
# Logs go to $L (default /tmp/gpu-logs); summaries to stdout and $OUT; everything is tarred into
# $OUT/logs.tgz at the end. Each step has a time limit so that the batch ends inside one call.
set -uo pipefail
steps=${1:-suite replicas generate decode graphs qwen ortbench gpt2}
L=${L:-/tmp/gpu-logs}
OUT=${OUT:-$L}
mkdir -p "$L" "$OUT"
export PYTHONUNBUFFERED=1
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
runner=/tmp/carve-runner
unxz() { xz -dc "$1" 2>/dev/null || python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"; }
unxz .gpu/runner.bin.xz > "$runner" && chmod +x "$runner"
nvidia-smi -L | tee "$OUT/gpus.txt"
has() { [[ " $steps " == *" $1 "* ]]; }
S=/tmp/gpu-soak # the background soak's folder: outside $L, which a later call may reuse
if has suite; then
  echo "== suite: every cuda test binary"
  OUT=$L BENCH= timeout 240 bash .gpu/run.sh 2>&1 | grep -Ev '^\s+\|' | tee "$OUT/suite.txt" | grep -E '^(libs_|run.sh)'
fi
if has attnbench; then
  echo "== attnbench: the ONNX Attention prefill kernel alone (bf16, 12 q / 2 kv heads, D 128), TFLOP/s"
  OUT=$L/attn RUN='^TestONNXAttentionFLOPS$' CARVE_BENCH=1 BENCH= timeout 120 bash .gpu/run.sh > /dev/null 2>&1
  grep -h 'BENCH' "$L"/attn/libs_kernels_cuda.log | sed 's/^ *//' | tee "$OUT/attnbench.txt"
fi
if has replicas; then
  echo "== replicas: qwen2 fixture, --graph, 2 sessions per device"
  m=libs/graph/testmodels/testdata/qwen2.onnx
  for dev in cuda:0 cuda:0,cuda:1 cuda:all; do
    if timeout 60 "$runner" bench --device "$dev" --graph --concurrency 2 --model $m --dim batch=3 --dim seq=16 \
      --runs 4000 --format json > "$L/replicas_${dev//[:,]/_}.json" 2> "$L/replicas.err"; then
      python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f'{sys.argv[2]:<14} {d[\"runs_per_second\"]:8.0f} runs/s  p50 {d[\"latency_ms\"][\"p50\"]:.3f} ms  sessions {d[\"sessions\"]}  device mallocs/run {d[\"device_mallocs_per_run\"]:.0f}')" \
        "$L/replicas_${dev//[:,]/_}.json" "$dev"
    else
      echo "$dev: $(tail -1 "$L/replicas.err")"
    fi
  done | tee "$OUT/replicas.txt"
fi
if has generate; then
  echo "== generate: the KV-cache fixtures, 2 x 7 prompt tokens and 32 new ones, eager and as CUDA graphs"
  for fx in qwen2_kv qwen2_gqa; do
    for g in "" --graph; do
      echo "-- $fx $g"
      timeout 60 "$runner" generate --model libs/graph/testmodels/testdata/$fx.onnx --device cuda $g \
        --batch 2 --prompt-len 7 --max-new-tokens 32 2>&1 | grep -E '^(reserved|first token|ms/token|tokens/s|timed run|runner:)'
    done
  done | tee "$OUT/generate.txt"
fi
if has decode; then
  echo "== decode: Qwen2.5-1.5B-shaped GQA export, runner generate against PyTorch's static decode"
  torch=--torch
  [ -n "${NO_TORCH:-}" ] && torch= # NO_TORCH=1: carve's side only (PyTorch's figures are stable)
  timeout 420 python3 .gpu/decode_bench.py --export /tmp/qwen-gqa $torch --carve "$runner" --out "$L" > "$L/decode.log" 2>&1
  grep -vE '^\[' "$L/decode.log" | tail -20 | tee "$OUT/decode.txt"
  cp "$L/decode_bench.json" "$OUT/" 2>/dev/null
  echo "-- the decode step's device time by category, batch 1 (runner generate --profile)"
  timeout 90 "$runner" generate --model /tmp/qwen-gqa/model.onnx --device cuda --graph --batch 1 --prompt-len 1024 \
    --max-new-tokens 64 --profile > "$OUT/profile.txt" 2>&1
  sed -n '/^profile/,$p' "$OUT/profile.txt" | head -40
fi
if has graphs; then
  echo "== graphs: runs per second with and without CUDA graphs (qwen2 fixture, batch 3, seq 16, 1 session)"
  for g in "" --graph; do
    timeout 60 "$runner" bench --device cuda $g --model libs/graph/testmodels/testdata/qwen2.onnx --dim batch=3 --dim seq=16 \
      --runs 4000 --format json > "$L/graphs$g.json" 2>&1 &&
      python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f'{sys.argv[2]:<8} {d[\"runs_per_second\"]:8.0f} runs/s  p50 {d[\"latency_ms\"][\"p50\"]:.3f} ms  Go allocs/run {d[\"go_allocs_per_run\"]:.2f}  device mallocs/run {d[\"device_mallocs_per_run\"]:.0f}')" \
        "$L/graphs$g.json" "${g:-eager}"
  done | tee "$OUT/graphs.txt"
fi
if has qwen; then
  echo "== qwen: Qwen2.5-1.5B-shaped export, carve against PyTorch eager (all logits, and the last position's)"
  (cd .gpu && timeout 480 python3 qwen_bench.py --runner "$runner" --out "$L" --export /tmp/qwen-bench \
    --profile "--graph --outputs device") > "$L/qwen.log" 2>&1
  sed -n '/^Qwen2.5/,$p' "$L/qwen.log" | tee "$OUT/qwen.txt"
  for f in "$L"/profile_*.txt; do
    [ -f "$f" ] || continue
    echo "-- $(basename "$f" .txt): a prefill run's device time by category (--graph --outputs device)"
    sed -n '/^profile/,$p' "$f" | head -24
  done > "$OUT/qwen_profile.txt"
  grep -A14 'profile_last_1x2048' "$OUT/qwen_profile.txt"
  echo "-- the tight plan at (1, 2048), last position's logits (runner run --tight --stats)"
  timeout 90 "$runner" run --device cuda --model /tmp/qwen-bench/qwen2_1p5b_last.onnx --dim batch=1 --dim seq=2048 \
    --tight --stats table --out /tmp/qwen-bench/out > "$OUT/qwen_tight.txt" 2>&1
  grep -E -A16 '^(workspaces below|reserved|arena)' "$OUT/qwen_tight.txt" | head -40
  grep -E 'carve .* (error|failed)' "$L/qwen.log" | head -5
fi
if has ortbench; then
  echo "== ortbench: fixtures, carve on the CPU against onnxruntime, 16 threads"
  timeout 170 python3 tools/ortbench/ortbench.py --carve "$runner" --threads 16 --runs 20 --warmup 3 --check > "$OUT/ortbench16.txt" 2>&1
  tail -50 "$OUT/ortbench16.txt"
fi
if has gpt2; then
  echo "== gpt2: GPT-2-small shape, carve on the CPU against onnxruntime, 16 threads"
  timeout 150 sh -c "python3 tools/ortbench/make_gpt2.py --out /tmp/gpt2s.onnx > $L/gpt2export.log 2>&1 &&
    python3 tools/ortbench/ortbench.py /tmp/gpt2s.onnx --shapes 1x128,8x128 --carve $runner --threads 16 --runs 10 --warmup 2 --check" > "$OUT/gpt2s16.txt" 2>&1
  tail -8 "$OUT/gpt2s16.txt"
fi
if has soak; then
  echo "== soak: qwen2 fixture, 4 sessions on cuda:0 for ${SOAK_S:-540} s, memory sampled every 5 s"
  RUNNER=$runner bash tools/gpu/soak.sh -d "${SOAK_S:-540}" -o "$L/soak.csv" 2>&1 | tee "$OUT/soak.txt"
fi
if has soak+cpu; then
  n=$(nproc); cpu=$((n - 4))
  echo "== soak+cpu: the soak on cores $cpu-$((n - 1)) for ${SOAK_S:-420} s; ortbench and gpt2 at $cpu threads on cores 0-$((cpu - 1))"
  taskset -c "$cpu-$((n - 1))" env GOMAXPROCS=4 RUNNER=$runner bash tools/gpu/soak.sh -d "${SOAK_S:-420}" -o "$L/soak.csv" > "$OUT/soak.txt" 2>&1 &
  soak=$!
  taskset -c "0-$((cpu - 1))" timeout 200 python3 tools/ortbench/ortbench.py --carve "$runner" --threads "$cpu" --runs 20 --warmup 3 --check > "$OUT/ortbench$cpu.txt" 2>&1
  tail -40 "$OUT/ortbench$cpu.txt"
  taskset -c "0-$((cpu - 1))" timeout 170 sh -c "python3 tools/ortbench/make_gpt2.py --out /tmp/gpt2s.onnx > $L/gpt2export.log 2>&1 &&
    python3 tools/ortbench/ortbench.py /tmp/gpt2s.onnx --shapes 1x128,8x128 --carve $runner --threads $cpu --runs 10 --warmup 2 --check" > "$OUT/gpt2s$cpu.txt" 2>&1
  tail -8 "$OUT/gpt2s$cpu.txt"
  wait $soak
  tail -25 "$OUT/soak.txt"
fi
if has soak-start; then
  n=$(nproc)
  rm -rf "$S" && mkdir -p "$S" && cp "$runner" "$S/runner" # a later call rewrites $runner
  echo "== soak-start: qwen2 fixture, 4 sessions on cuda:0 for ${SOAK_S:-600} s on cores $((n - 4))-$((n - 1)), in the background"
  setsid nohup taskset -c "$((n - 4))-$((n - 1))" env GOMAXPROCS=4 SHARED_GPU=1 RUNNER=$S/runner \
    bash -c "bash tools/gpu/soak.sh -d ${SOAK_S:-600} -o $S/soak.csv > $S/soak.txt 2>&1; echo \$? > $S/rc" < /dev/null > /dev/null 2>&1 &
  sleep 2
  head -1 "$S/soak.txt"
fi
if has soak-wait; then
  echo "== soak-wait: the background soak's summary"
  for _ in $(seq 1 590); do [ -f "$S/rc" ] && break; sleep 1; done
  if [ -f "$S/rc" ]; then
    cp "$S/soak.csv" "$OUT/" 2>/dev/null
    sed -n '/^soak: process_mib/,$p' "$S/soak.txt" | tee "$OUT/soak.txt"
    echo "soak exit status $(cat "$S/rc")"
  else
    echo "soak-wait: the soak has not ended (is it running? $(ls "$S" 2>&1 | tr '\n' ' '))"
  fi
fi
tar czf "$OUT/logs.tgz" -C "$L" .

#!/bin/bash
# Runs carve's benchmarks and prints their figures (the speed and memory goals live here, not in
# tests). Quiet machines give steadier numbers; run with nothing else busy.
#   tools/bench.sh            everything (several minutes)
#   tools/bench.sh planner    one group: planner, alloc, kernels, graph, engine, estimator, runner
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
only=${1:-}
group() { [ -z "$only" ] || [ "$only" = "$1" ]; }
bench() { # bench DIR PATTERN [go test flags...]
  local dir=$1 pat=$2; shift 2
  (cd "$dir" && go test -run '^$' -bench "$pat" -benchmem "$@" ./... 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' )
}
if group planner; then
  echo "== planner: MiniMalloc's challenging instances (best known peak; MiniMalloc's seconds on 2 cores)"
  (cd libs/planner && go run ./cmd/plannerbench)
  echo "== planner: real model lifetimes (target: within 1% of the lower bound in under 50 ms)"
  bench libs/engine BenchmarkPlannerRealModels -benchtime 5x
fi
group alloc && { echo "== alloc: cached alloc+free pair (target < 100 ns, 0 device calls)"; bench libs/alloc 'AllocFree' -benchtime 200ms -count 5; }
group kernels && { echo "== kernels: CPU kernels"; bench libs/kernels . -benchtime 20x; }
group graph && { echo "== graph: load, bind and lifetimes of the 28-layer model"; bench libs/graph . -benchtime 2s; }
group estimator && { echo "== estimator: report on the 28-layer Qwen2 over batch=1:64 seq=1:32768 (target < 1 s)"; bench apps/estimator . -benchtime 5x; }
group runner && { echo "== runner: runs per second and executor overhead per run"; bench apps/runner . -benchtime 2s; }

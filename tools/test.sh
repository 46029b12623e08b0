#!/bin/bash
# Runs every carve test and ends with CI's summary line, "N passed, N failed":
#   1. bazel test //...                       (the build of record: every package's tests)
#   2. bazel build --config=cuda //...        (GPU code compiles; CUDA headers from tools/cuda/headers.sh;
#                                             a failure prints the failing action's own output)
#   3. go test -race on the concurrent code   (Bazel would build a second, race-enabled standard library)
#   4. go test carve.dev/tools/...            (stale vendoring/BUILD checks read the whole tree)
#   5. go vet carve.dev/...
#   6. staticcheck carve.dev/...              (pinned; default build and -tags cuda; staticcheck.conf)
#   7. every fuzz target for FUZZTIME each    (default 5s; about a minute and a half in all on 2 cores)
# The fault-injection sweeps (libs/engine TestFaultInjectionSweep on the CPU device and
# TestFaultInjectionSweepSim on the simulated discrete one, every N in full; under -race every 7th
# after the first 64) run in steps 1 and 3.
# Idempotent: installs what it needs first (tools/setup.sh). Exit status 0 only when all passed.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
tools/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
extra_pass=0 extra_fail=0
step() { # step NAME CMD...: one pass/fail case for a command that is not a test runner
  echo "== $1" >&2
  if "${@:2}"; then extra_pass=$((extra_pass + 1)); else extra_fail=$((extra_fail + 1)); echo "FAIL: $1" >&2; fi
}

echo "== bazel test //..." >&2
bazel test //... 2>&1 | tee "$logs/bazel.log" >&2

# The CUDA build's whole log goes to $logs/cuda.log. A failure prints it from the first ERROR on:
# without --keep_going that is the failing action (with --verbose_failures, its command line and
# then its own output, e.g. nvcc's errors) and Bazel's summary; a failure with no ERROR line (the
# Bazel server gone, say) prints the log's end. Success prints Bazel's time and action counts.
cuda_build() {
  tools/cuda/headers.sh >/dev/null || return 1
  bazel build --config=cuda --verbose_failures //... > "$logs/cuda.log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then
    grep -E '^INFO: (Elapsed time|[0-9]+ process|Build completed)' "$logs/cuda.log" | awk '!seen[$0]++' >&2
  elif grep -q '^ERROR:' "$logs/cuda.log"; then
    sed -n '/^ERROR:/,$p' "$logs/cuda.log" >&2
  else
    tail -40 "$logs/cuda.log" >&2
  fi
  return $rc
}
step "bazel build --config=cuda //..." cuda_build

# gotest NAME ARGS...: go test -json into $logs/NAME.json; a run that fails without reporting a
# failed test (a pattern or build error) counts as one failure of its own.
gotest() {
  local name=$1; shift
  echo "== go test $*" >&2
  go test -count=1 -json "$@" > "$logs/$name.json" 2> "$logs/$name.err"
  local rc=$?
  cat "$logs/$name.err" >&2
  grep -h '"Action":"fail"' "$logs/$name.json" | grep '"Test"' >&2
  if [ $rc -ne 0 ] && ! grep -q '"Action":"fail"' "$logs/$name.json"; then
    echo "FAIL: go test $* exited $rc without a test failure" >&2
    extra_fail=$((extra_fail + 1))
  fi
}
# Import-path patterns: in a go.work workspace, ./... only works inside one module.
gotest race -race carve.dev/libs/alloc/... carve.dev/libs/planner/... carve.dev/libs/engine/... carve.dev/apps/runner/...
gotest tools carve.dev/tools/...

step "go vet carve.dev/..." go vet carve.dev/...

# staticcheck 2026.2.2, pinned, over every module of go.work (go.mod ignores third_party), with the
# default build and -tags cuda merged (-matrix), so that U1000 reports only code neither build
# uses; the cuda files' cgo needs the CUDA headers (tools/cuda/headers.sh). The checks it leaves
# out, and why, are in staticcheck.conf. go run builds it from the module cache once the first run
# has downloaded it; GOPROXY tries that cache first because go run PKG@VERSION looks up the
# module's latest version (for deprecation notices) even when VERSION is cached, which fails offline.
STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck_all() ( # a subshell: headers.sh's CGO variables stay out of the other steps
  vars=$(tools/cuda/headers.sh) || exit 1
  eval "$vars"
  printf 'default:\ncuda: -tags=cuda\n' |
    GOPROXY="file://$(go env GOMODCACHE)/cache/download|$(go env GOPROXY)" go run "$STATICCHECK" -matrix carve.dev/...
)
step "staticcheck carve.dev/... (default and -tags cuda)" staticcheck_all

# fuzz DIR TARGET: one fuzz target from its seeds and testdata/fuzz corpus for FUZZTIME. A
# failure prints the input that failed; go test has written it to DIR/testdata/fuzz/TARGET/,
# where it belongs in the commit that fixes it (it then runs in every plain go test).
# On a loaded machine go's fuzzing coordinator can end a run that found nothing with "context
# deadline exceeded" when a worker answers late at -fuzztime's end (no input is written then);
# such a run is tried once more, and a second one counts as a failure.
fuzz() {
  local out try
  for try in 1 2; do
    if out=$(cd "$1" && go test -run '^$' -fuzz "^$2\$" -fuzztime "${FUZZTIME:-5s}" . 2>&1); then
      return 0
    fi
    if [ "$try" = 1 ] && grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out"; then
      echo "fuzz $2: the coordinator timed out at the end of a run that found nothing; again" >&2
      continue
    fi
    echo "$out" | tail -40 >&2
    return 1
  done
}
while read -r dir target; do
  step "fuzz $target ($dir)" fuzz "$dir" "$target"
done < <(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+\(' libs apps |
  sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+)\(.*#\1 \2#' | sort -u)

go run ./tools/testsum -bazel-log "$logs/bazel.log" -testlogs bazel-testlogs \
  -go-json "$logs/race.json" -go-json "$logs/tools.json" > "$logs/sum"
read -r p _ f _ < "$logs/sum" || { cat "$logs/sum"; echo "0 passed, 1 failed"; exit 1; }
p=$((p + extra_pass)) f=$((f + extra_fail))
echo "$p passed, $f failed"
[ "$f" -eq 0 ]

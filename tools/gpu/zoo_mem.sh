#!/bin/bash
# On the GPU host: every zoo family's planned arena on the H200 (the default reservation and the
# tight one, --tight, whose cuBLASLt caps are measured on the device) at (8, 2048), next to
# PyTorch eager's peak memory beyond the weights for the same config and shape
# (tools/zoo/torch_peak.py), both counting the logits of every position. The models are the
# zoo's dynamo exports with an attention_mask input (FAMILY.dyn_mask.onnx).
#   tools/gpu/zoo_mem.sh RUNNER ZOO_DIR [FAMILY,...]   (RUNNER: a cuda build of the runner;
#   the families, by default all)
set -uo pipefail
runner=$1 zoo=$2 only=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
lt=$(find / -name 'libcublasLt.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
[ -n "$lt" ] && export LD_LIBRARY_PATH="$(dirname "$lt"):$LD_LIBRARY_PATH"
peaks=$(mktemp)
python3 "$here/../zoo/torch_peak.py" --batch 8 --seq 2048 ${only:+--only "$only"} > "$peaks" 2>/dev/null
printf '%-16s %12s %12s %14s %7s\n' family "carve MiB" "tight MiB" "PyTorch MiB" "tight/PT"
for f in "$zoo"/*.dyn_mask.onnx; do
  fam=$(basename "$f" .dyn_mask.onnx)
  [ -n "$only" ] && [[ ",$only," != *",$fam,"* ]] && continue
  out=$("$runner" run --model "$f" --device cuda --tight --dim batch=8 --dim seq=2048 --repeat 1 --format json 2>&1)
  FAM=$fam OUT=$out PEAKS=$peaks python3 - <<'PY'
import json, os
fam = os.environ["FAM"]
try:
    r = json.loads(os.environ["OUT"])["reservation"]
    d, t = r["default_arena_bytes"] / 2**20, r["arena_bytes"] / 2**20
except Exception:
    print(f"{fam:16s} runner failed: {os.environ['OUT'][-200:]!r}")
    raise SystemExit
p = json.load(open(os.environ["PEAKS"])).get(fam, {}).get("peak_extra_bytes")
pt = f"{p / 2**20:14.1f} {t / (p / 2**20):6.2f}x" if p else f"{'-':>14s}"
print(f"{fam:16s} {d:12.1f} {t:12.1f} {pt}")
PY
done

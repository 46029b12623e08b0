#!/usr/bin/env bash
# Regenerates libs/graph/internal/onnxpb/onnx.pb.go from the ONNX schema committed beside it.
#
#   tools/onnxpb/gen.sh                      # regenerate onnx.pb.go from onnx.proto3
#   tools/onnxpb/gen.sh --from ONNX_PROTO    # first re-derive onnx.proto3 from ONNX's onnx.proto
#
# onnx.proto3 was derived from onnx/onnx.proto of the onnx 1.23.1 Python wheel (IR version 14)
# with the rule ONNX's own gen_proto.py uses to make its onnx.proto3: proto3 syntax and no
# `optional` labels; nothing else changes, so the wire format is the same.
# Needs protoc (apt-get install -y protobuf-compiler) and protoc-gen-go v1.36.12
# (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12). CI never runs this.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$root/libs/graph/internal/onnxpb"
if [[ "${1:-}" == "--from" ]]; then
  src="$2"
  grep -q '^syntax = "proto2";' "$src" || { echo "gen.sh: $src is not a proto2 onnx.proto" >&2; exit 1; }
  if grep -Eq '^\s*(required|extensions|group)\b|\[default' "$src"; then
    echo "gen.sh: $src uses proto2 features that proto3 lacks; update the conversion" >&2; exit 1
  fi
  sed -e 's/^syntax = "proto2";/syntax = "proto3";/' -e 's/^\(\s*\)optional /\1/' "$src" >"$dir/onnx.proto3"
fi
want="protoc-gen-go v1.36.12"
got="$(protoc-gen-go --version)"
[[ "$got" == "$want" ]] || { echo "gen.sh: want $want, have $got" >&2; exit 1; }
cd "$dir"
protoc --proto_path=. --go_out=. --go_opt=paths=source_relative \
  --go_opt=Monnx.proto3=carve.dev/libs/graph/internal/onnxpb onnx.proto3
echo "generated $dir/onnx.proto3.pb.go"

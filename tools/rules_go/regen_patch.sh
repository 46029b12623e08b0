#!/bin/bash
# Regenerates tools/rules_go/rules_go-$VERSION.patch from a pristine rules_go taken from the Go module
# proxy: patch_rules_go.py rewrites the tree for Bazel 4.2.3 + Go 1.26, and git diff records the change.
#   tools/rules_go/regen_patch.sh [VERSION]     (default: the version tools/setup.sh pins)
set -euo pipefail
cd "$(dirname "$0")"
VERSION=${1:-$(sed -n 's/^RULES_GO_VERSION=//p' ../setup.sh)}
dir=$(cd /tmp && GOWORK=off GOFLAGS= go mod download -json "github.com/bazelbuild/rules_go@$VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp -r "$dir" "$work/a"; chmod -R u+w "$work/a"
(cd "$work/a" && git init -q && git add -A && git -c user.email=x@x -c user.name=x commit -qm pristine)
python3 patch_rules_go.py "$work/a" >&2
(cd "$work/a" && git add -A && git diff --cached) > "rules_go-$VERSION.patch"
echo "wrote tools/rules_go/rules_go-$VERSION.patch" >&2

#!/bin/bash
# Puts CUDA 11.8's driver headers and link stubs (Debian bookworm non-free nvidia-cuda-dev) under
# ~/.cache/carve/cuda, without installing CUDA or touching /etc/apt, and writes cuda.local.bazelrc so
# `bazel build --config=cuda` finds them. Idempotent: does nothing when they are there.
# Prints the CGO_CFLAGS/CGO_LDFLAGS for `go build -tags cuda` (eval "$(tools/cuda/headers.sh)").
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE=${CARVE_CACHE:-$HOME/.cache/carve}
home=$CACHE/cuda
if ! [ -f "$home/usr/include/cuda.h" ] || ! [ -f "$home/usr/lib/x86_64-linux-gnu/stubs/libcuda.so" ]; then
  W=$CACHE/apt
  mkdir -p "$W/lists/partial" "$W/cache/archives/partial" "$home.tmp"
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri bookworm non-free" > "$W/sources.list"
  alt=(-o APT::Sandbox::User=root -o Dir::Etc::sourcelist="$W/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$W/lists" -o Dir::Cache="$W/cache")
  echo "cuda headers: downloading nvidia-cuda-dev (once, ~770 MB)" >&2
  apt-get "${alt[@]}" update -qq
  (cd "$W" && rm -f nvidia-cuda-dev_*.deb && apt-get "${alt[@]}" download nvidia-cuda-dev >/dev/null)
  dpkg-deb --fsys-tarfile "$W"/nvidia-cuda-dev_*.deb | tar -x -C "$home.tmp" \
    --wildcards './usr/include/*' './usr/lib/x86_64-linux-gnu/stubs/*'
  rm -f "$W"/nvidia-cuda-dev_*.deb
  rm -rf "$home" && mv "$home.tmp" "$home"
fi
echo "build --repo_env=CARVE_CUDA_HOME=$home" > cuda.local.bazelrc
echo "export CGO_ENABLED=1 CGO_CFLAGS=-I$home/usr/include CGO_LDFLAGS=-L$home/usr/lib/x86_64-linux-gnu/stubs"

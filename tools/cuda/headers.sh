#!/bin/bash
# Fetches the project's one CUDA toolchain, CUDA 12.4.1 from Debian trixie non-free, into
# ~/.cache/carve/cuda-12.4.1 (CARVE_CACHE overrides ~/.cache/carve), without installing CUDA or
# touching /etc/apt (private apt lists):
#   nvidia-cuda-dev      headers (driver API, runtime, cuBLAS/cuBLASLt, cuda_fp16.h, cuda_bf16.h);
#   nvidia-cuda-toolkit  nvcc, cicc, ptxas, fatbinary and libdevice, with a nvcc.profile of our own
#                        (nvcc reads it beside its binary) pointing at this folder;
#   libcu++-dev          (trixie main) <nv/target> and <cuda/...>, which cuda_fp16.h/cuda_bf16.h include.
# Only what the build needs is extracted; the .debs (about 1 GB) are deleted after. Idempotent:
# does nothing when the pinned versions are in place. Writes cuda.local.bazelrc so that
# `bazel build --config=cuda` finds them, and prints the variables for `go build -tags cuda`:
#   eval "$(tools/cuda/headers.sh)"
# CARVE_NVCC in that output is the nvcc tools/cuda/kernels.sh uses.
set -euo pipefail
cd "$(dirname "$0")/../.."
DEV_VERSION=12.4.127~12.4.1-2
TOOLKIT_VERSION=12.4.131~12.4.1-2
LIBCUXX_VERSION=2.3.2-2
CACHE=${CARVE_CACHE:-$HOME/.cache/carve}
home=$CACHE/cuda-12.4.1
stamp="nvidia-cuda-dev=$DEV_VERSION nvidia-cuda-toolkit=$TOOLKIT_VERSION libcu++-dev=$LIBCUXX_VERSION"
tk=usr/lib/nvidia-cuda-toolkit

if [ "$(cat "$home/.complete" 2>/dev/null)" != "$stamp" ]; then
  W=$CACHE/apt-trixie
  mkdir -p "$W/lists/partial" "$W/cache/archives/partial"
  rm -rf "$home.tmp" && mkdir -p "$home.tmp"
  # The mirror this machine's apt already uses for main; the suite and component are ours.
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s trixie %s\n' "$uri" non-free "$uri" main > "$W/sources.list"
  alt=(-o APT::Sandbox::User=root -o Dir::Etc::sourcelist="$W/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$W/lists" -o Dir::Cache="$W/cache")
  echo "cuda toolchain: downloading nvidia-cuda-dev and nvidia-cuda-toolkit 12.4 (once, ~1 GB)" >&2
  apt-get "${alt[@]}" update -qq
  (cd "$W" && rm -f ./*.deb && apt-get "${alt[@]}" download -qq $stamp >/dev/null) || {
    echo "cuda toolchain: could not download the pinned packages ($stamp); if trixie moved on, update the *_VERSION pins in $0" >&2
    exit 1
  }
  echo "cuda toolchain: extracting into $home" >&2
  # Headers only (without the libraries carve does not use): the driver and cuBLASLt are loaded
  # at run time (dlopen), so nothing links their stubs.
  dpkg-deb --fsys-tarfile "$W"/nvidia-cuda-dev_*.deb | tar -x -C "$home.tmp" \
    --exclude='./usr/include/npp*' --exclude='./usr/include/nvjpeg*' --exclude='./usr/include/cufft*' \
    --exclude='./usr/include/curand*' --exclude='./usr/include/cusolver*' --exclude='./usr/include/cusparse*' \
    --exclude='./usr/include/cupti*' --exclude='./usr/include/nvml*' --exclude='./usr/include/Openacc' \
    --exclude='./usr/include/Openmp' --exclude='./usr/include/CL' --exclude='./usr/include/nvtx3' \
    --wildcards './usr/include/*'
  dpkg-deb --fsys-tarfile "$W"/nvidia-cuda-toolkit_*.deb | tar -x -C "$home.tmp" \
    "./$tk/bin/nvcc" "./$tk/bin/cicc" "./$tk/bin/crt" "./$tk/bin/gcc" "./$tk/bin/g++" "./$tk/libdevice" \
    ./usr/bin/ptxas ./usr/bin/fatbinary ./usr/bin/nvlink ./usr/bin/cudafe++ ./usr/bin/bin2c \
    ./usr/bin/cuobjdump ./usr/bin/nvdisasm ./usr/bin/nvprune ./usr/bin/cu++filt
  dpkg-deb --fsys-tarfile "$W"/libcu++-dev_*.deb | tar -x -C "$home.tmp" ./usr/include/nv ./usr/include/cuda
  # nvcc reads nvcc.profile beside the path it was run by; Debian's is a link to /etc.
  cat > "$home.tmp/$tk/bin/nvcc.profile" <<EOP
NVVMIR_LIBRARY_DIR = $home/$tk/libdevice
PATH += $home/$tk/bin:$home/usr/bin:
INCLUDES += "-I$home/usr/include" \$(_SPACE_)
EOP
  rm -f "$W"/*.deb
  rm -rf "$home" && mv "$home.tmp" "$home"
  "$home/$tk/bin/nvcc" --version >/dev/null || { echo "cuda toolchain: nvcc does not run" >&2; exit 1; }
  echo "$stamp" > "$home/.complete"
fi
cat > cuda.local.bazelrc <<EOB
build --repo_env=CARVE_CUDA_HOME=$home
build --repo_env=CARVE_NVCC_HOME=$home
EOB
echo "export CGO_ENABLED=1 CGO_CFLAGS=-I$home/usr/include CARVE_NVCC=$home/$tk/bin/nvcc"

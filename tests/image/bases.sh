#!/bin/bash
# The local images the image test builds docker/Dockerfile from, made offline
# from Debian's packages and this machine's CUDA toolkit. Each is rebuilt only
# when its recipe (this file, the stand-in torch, the toolkit) changes.
#
#   localhost/gpuenv-test-base:12   Debian 12 + python3 (with pip, setuptools and the
#                                   headers, as the PyTorch image's conda Python has)
#                                   + a stand-in torch 2.14.0+cu130 (its version files
#                                   and a fatbin library, as the doctor tests use), and
#                                   TORCH_CUDA_ARCH_LIST set by the base as NGC's images
#                                   set it (every arch built): BASE_IMAGE and BUILD_IMAGE
#   localhost/gpuenv-test-cuda:13   nvcc, headers and the static runtime of
#                                   /usr/local/cuda, laid out as nvidia/cuda's
#                                   devel images are: CUDA_IMAGE
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
BASE=localhost/gpuenv-test-base:12
CUDA=localhost/gpuenv-test-cuda:13
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
SUITE=bookworm
MIRROR=${GPUENV_TEST_MIRROR:-http://deb.debian.org/debian}

log() { echo "bases.sh: $*" >&2; }

# A recipe is the text of the functions that make an image, and their inputs.
recipe_of() { (declare -f "$1"; shift; cat "$@") | sha256sum | cut -c1-16; }

current() {  # current IMAGE RECIPE: does IMAGE exist, made from RECIPE?
  [ "$(podman image inspect --format '{{index .Labels "gpuenv.recipe"}}' "$1" 2>/dev/null)" = "$2" ]
}

# The stand-in torch: what gpuenv reads of a real one (torch/version.py and
# the CUDA code in lib/libtorch_cuda.so), importable as `import torch`.
stage_torch() {
  site=$1/usr/local/lib/python3.11/dist-packages/torch
  mkdir -p "$site/lib"
  printf "__version__ = '2.14.0+cu130'\ncuda = '13.0'\ngit_version = 'stand-in'\n" >"$site/version.py"
  printf 'from .version import __version__\n' >"$site/__init__.py"
  cp "$repo/tests/fatbins/sm89_ptx89.so" "$site/lib/libtorch_cuda.so"
}

make_base() {
  recipe=$( (declare -f stage_torch; recipe_of make_base "$repo/tests/fatbins/sm89_ptx89.so"; echo "$SUITE") | sha256sum | cut -c1-16)
  if current "$BASE" "$recipe"; then log "$BASE is current"; return; fi
  tmp=$(mktemp -d)
  stage_torch "$tmp/torch"
  log "bootstrapping Debian 12 from $MIRROR (mmdebstrap, about 2 minutes)"
  mmdebstrap --quiet --variant=apt --include=python3,python3-pip,python3-setuptools,python3-wheel,python3-dev,ca-certificates \
    --customize-hook="copy-in $tmp/torch/usr/local/lib /usr/local" \
    "$SUITE" "$tmp/rootfs.tar" "$MIRROR"
  podman import --quiet --change "LABEL gpuenv.recipe=$recipe" --change 'CMD ["/bin/bash"]' \
    --change 'ENV TORCH_CUDA_ARCH_LIST="7.5 8.0 8.6 9.0 10.0 12.0+PTX"' "$tmp/rootfs.tar" "$BASE" >/dev/null
  rm -rf "$tmp"
  log "made $BASE"
}

# nvidia/cuda devel images keep the toolkit in /usr/local/cuda-X.Y with
# targets/x86_64-linux/{include,lib}, include and lib64 linking there, and
# /usr/local/cuda linking to the versioned directory.
make_cuda() {
  real=$(readlink -f "$CUDA_HOME")
  [ -x "$real/bin/nvcc" ] || { log "no CUDA toolkit at $CUDA_HOME (set CUDA_HOME)"; exit 1; }
  version=$("$real/bin/nvcc" --version | tail -n1)
  recipe=$( (echo "$version"; recipe_of make_cuda) | sha256sum | cut -c1-16)
  if current "$CUDA" "$recipe"; then log "$CUDA is current"; return; fi
  tmp=$(mktemp -d)
  name=$(basename "$real")
  top=$tmp/usr/local/$name
  mkdir -p "$top/targets/x86_64-linux/lib"
  cp -a "$real/bin" "$real/nvvm" "$top/"
  cp -aL "$real/include" "$top/targets/x86_64-linux/include"
  cp -aL "$real/lib64/"libcudart* "$real/lib64/libcudadevrt.a" "$real/lib64/libculibos.a" \
    "$top/targets/x86_64-linux/lib/"
  ln -s targets/x86_64-linux/include "$top/include"
  ln -s targets/x86_64-linux/lib "$top/lib64"
  ln -s "$name" "$tmp/usr/local/cuda"
  tar -C "$tmp" -cf "$tmp/cuda.tar" usr
  podman import --quiet --change "LABEL gpuenv.recipe=$recipe" "$tmp/cuda.tar" "$CUDA" >/dev/null
  rm -rf "$tmp"
  log "made $CUDA ($version)"
}

make_base
make_cuda

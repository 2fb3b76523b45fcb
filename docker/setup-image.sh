#!/bin/sh
# What the image's Dockerfile does, as steps that can run (and be tested) one
# at a time, outside Docker too:
#
#   setup-image.sh all [pypi|debian]     every runtime step, in order
#   setup-image.sh base-env              record the base image's environment (env -0) in
#                                        /usr/local/lib/gpuenv/base-image.env: a variable
#                                        still holding that value at run time is the image's
#   setup-image.sh packages              tini, openssh-server, libudev1 from apt
#   setup-image.sh jupyter [pypi|debian] JupyterLab from PyPI, pinned ($JUPYTERLAB_VERSION)
#                                        (default), or Debian's Jupyter Server (no PyPI)
#   setup-image.sh account               user, dirs, bashrc and hostkeys for $GPUENV_USER
#   setup-image.sh user NAME UID         the non-root user (idempotent)
#   setup-image.sh dirs NAME             /workspace, /cache, /etc/gpuenv, /run/sshd
#   setup-image.sh bashrc                interactive shells read the plan (/etc/bash.bashrc)
#   setup-image.sh hostkeys              drop the SSH host keys baked in by the package
#   setup-image.sh verify BINARY         the binary runs and finds all its libraries
#   setup-image.sh check-glibc BINARY MAX  the binary needs no glibc newer than MAX (build stage)
#   setup-image.sh devel                 the devel target: g++ and ninja from apt where missing,
#                                        the CUDA toolkit's include/lib64 links, checks nvcc
#                                        and Python.h
#
# ROOT (default empty) prefixes every path the dirs, bashrc and hostkeys steps
# touch, so that tests can run them in a scratch directory.
set -eu

ROOT=${ROOT:-}
GPUENV_USER=${GPUENV_USER:-gpuenv}
GPUENV_UID=${GPUENV_UID:-1000}
JUPYTERLAB_VERSION=${JUPYTERLAB_VERSION:-4.4.10}
BASHRC_HOOK='if [ -r /etc/profile.d/gpuenv.sh ]; then . /etc/profile.d/gpuenv.sh; fi  # gpuenv: the plan'

die() {
  echo "setup-image.sh: $*" >&2
  exit 1
}

step_packages() {
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    tini openssh-server libudev1 ca-certificates
  rm -rf /var/lib/apt/lists/*
}

# The image's Jupyter. `debian` is for builds that cannot reach PyPI (the
# image test): Debian packages Jupyter Server but not JupyterLab, and
# `gpuenv serve jupyter` runs whichever of the two is installed.
step_jupyter() {
  from=${1:-pypi}
  case $from in
    pypi)
      python3 -m pip install --no-cache-dir "jupyterlab==$JUPYTERLAB_VERSION"
      version=$(jupyter-lab --version) || die "jupyter-lab does not run after pip install"
      echo "setup-image.sh: jupyter: JupyterLab $version from PyPI" ;;
    debian)
      apt-get update
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends jupyter-server
      rm -rf /var/lib/apt/lists/*
      version=$(jupyter-server --version) || die "jupyter-server does not run after apt-get install"
      echo "setup-image.sh: jupyter: Jupyter Server $version from Debian" ;;
    *) die "jupyter: unknown source $from (pypi or debian)" ;;
  esac
}

# The user gpuenv serves as: uid UID, a group of the same name and id, a home,
# bash, and no password yet not locked ('*'): sshd without PAM refuses every
# login of a locked ('!') account, even with a key.
step_user() {
  name=$1 uid=$2
  if existing=$(getent passwd "$name"); then
    [ "$(echo "$existing" | cut -d: -f3)" = "$uid" ] || die "user $name exists with another uid than $uid"
    usermod --password '*' "$name"
    return 0
  fi
  if other=$(getent passwd "$uid"); then
    die "uid $uid is taken by $(echo "$other" | cut -d: -f1); pass another GPUENV_UID"
  fi
  getent group "$name" >/dev/null || groupadd --gid "$uid" "$name" 2>/dev/null || groupadd "$name"
  useradd --uid "$uid" --gid "$name" --create-home --shell /bin/bash --password '*' "$name"
}

# /workspace (notebooks, code) and /cache (the compile caches: a volume) are
# the user's; /etc/gpuenv is root's, and its ssh/ (host keys) root's alone.
step_dirs() {
  name=$1
  install -d -m 0755 -o "$name" -g "$(id -gn "$name")" "$ROOT/workspace" "$ROOT/cache"
  install -d -m 0755 -o root -g root "$ROOT/etc/gpuenv" "$ROOT/run/sshd" "$ROOT/etc/profile.d"
  install -d -m 0700 -o root -g root "$ROOT/etc/gpuenv/ssh"
}

# `docker exec -it CONTAINER bash` starts a non-login shell, which reads
# /etc/bash.bashrc but not /etc/profile.d: the hook gives it the plan too.
step_bashrc() {
  rc="$ROOT/etc/bash.bashrc"
  touch "$rc"
  grep -qxF "$BASHRC_HOOK" "$rc" || printf '%s\n' "$BASHRC_HOOK" >>"$rc"
}

# Keys made when the package was installed would be the same in every
# container of the image; `gpuenv serve ssh` makes one per container instead.
step_hostkeys() {
  rm -f "$ROOT"/etc/ssh/ssh_host_*
}

step_verify() {
  binary=$1
  missing=$(ldd "$binary" 2>&1 | grep 'not found' || true)
  [ -z "$missing" ] || die "$binary: missing libraries: $missing"
  "$binary" --version >/dev/null || die "$binary does not run"
  # The Python hook, where it is installed, is whole (sense/python/python_hook.h).
  hook=$(dirname "$binary")/../lib/gpuenv/python
  if [ -d "$hook" ]; then
    for f in sitecustomize.py gpuenv_precision.py; do
      [ -f "$hook/$f" ] || die "$hook/$f is missing: COPY python/$f beside sitecustomize.py"
    done
  fi
}

# The highest GLIBC_x.y symbol version the binary needs must not be newer
# than the runtime image's glibc (Ubuntu 22.04: 2.35).
step_check_glibc() {
  binary=$1 max=$2
  need=$(objdump -T "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1)
  [ -n "$need" ] || die "$binary: no GLIBC symbol versions found"
  newest=$(printf '%s\n%s\n' "$need" "$max" | sort -V | tail -n1)
  [ "$newest" = "$max" ] || die "$binary needs glibc $need; the runtime image has $max"
  echo "$binary needs glibc $need (runtime has $max)"
}

# The devel target: its Dockerfile stage has copied nvcc, the headers and the
# CUDA runtime to $CUDA_HOME. torch.utils.cpp_extension and setuptools need a
# host compiler (the PyTorch runtime image has none), ninja for parallel
# builds, and the Python headers (conda's Python has them).
step_devel() {
  cuda=${CUDA_HOME:-/usr/local/cuda}
  [ -e "$cuda/include" ] || ln -s targets/x86_64-linux/include "$cuda/include"
  [ -e "$cuda/lib64" ] || ln -s targets/x86_64-linux/lib "$cuda/lib64"
  missing=
  command -v g++ >/dev/null || missing=g++
  command -v ninja >/dev/null || missing="$missing ninja-build"
  if [ -n "$missing" ]; then
    apt-get update
    # shellcheck disable=SC2086 # one word per package
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
    rm -rf /var/lib/apt/lists/*
  fi
  nvcc=$("$cuda/bin/nvcc" --version) || die "devel: $cuda/bin/nvcc does not run"
  include=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  [ -f "$include/Python.h" ] || die "devel: no $include/Python.h: install the Python headers (python3-dev)"
  echo "setup-image.sh: devel: $(echo "$nvcc" | tail -n1); $(g++ --version | head -n1); $include/Python.h"
}

# The base image's environment as this build step sees it (its ENV lines),
# NUL-separated: gpuenv reads only the variables its rules set
# (sense/sense.h read_base_image_env). Run it before anything sets them.
step_base_env() {
  dir="$ROOT/usr/local/lib/gpuenv"
  mkdir -p "$dir"
  env -0 >"$dir/base-image.env.tmp"
  chmod 0644 "$dir/base-image.env.tmp"
  mv -f "$dir/base-image.env.tmp" "$dir/base-image.env"
}

step_account() {
  step_user "$GPUENV_USER" "$GPUENV_UID"
  step_dirs "$GPUENV_USER"
  step_bashrc
  step_hostkeys
}

step_all() {
  step_base_env
  step_packages
  step_jupyter "${1:-pypi}"
  step_account
  step_verify /usr/local/bin/gpuenv
}

[ $# -ge 1 ] || die "usage: setup-image.sh all [pypi|debian]|base-env|packages|jupyter [pypi|debian]|account|user NAME UID|dirs NAME|bashrc|hostkeys|verify BINARY|check-glibc BINARY MAX|devel"
step=$1
shift
case $step in
  all) step_all "$@" ;;
  base-env) step_base_env ;;
  packages) step_packages ;;
  jupyter) step_jupyter "$@" ;;
  account) step_account ;;
  user) [ $# -eq 2 ] || die "usage: user NAME UID"; step_user "$@" ;;
  dirs) [ $# -eq 1 ] || die "usage: dirs NAME"; step_dirs "$1" ;;
  bashrc) step_bashrc ;;
  hostkeys) step_hostkeys ;;
  verify) [ $# -eq 1 ] || die "usage: verify BINARY"; step_verify "$1" ;;
  check-glibc) [ $# -eq 2 ] || die "usage: check-glibc BINARY MAX"; step_check_glibc "$@" ;;
  devel) step_devel ;;
  *) die "unknown step: $step" ;;
esac

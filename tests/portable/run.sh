#!/bin/bash
# ctest portable.glibc: the portable binary (build/gpuenv-portable, linked as
# `cmake --preset portable` links gpuenv) runs on glibc 2.28 and later with
# nothing from the host but the NVIDIA libraries it dlopens.
#  1. Its highest GLIBC_ symbol version is at most 2.28 (RHEL 8), and it
#     needs no shared library beyond glibc's own.
#  2. In a Debian 11 root filesystem (glibc 2.31, the oldest Debian's mirror
#     still serves; buster's 2.28 is only on archive.debian.org), chrooted:
#     glibc_compat_test, and `detect`, `env`, `doctor` and a usage error (a
#     C++ exception) against the stand-in NVML and CUDA driver; export's
#     kubelet client (build/portable/gpuenv-kubelet, gRPC inside) answering.
# The root filesystem is made once with mmdebstrap (about a minute) and kept
# in $GPUENV_TEST_CACHE (default /var/cache/gpuenv-test), keyed by its recipe.
#   tests/portable/run.sh BUILD_DIR
# Exit 0: passed; 1: failed; 77: step 1 passed, step 2 skipped (the reason
# is printed: not root, no mmdebstrap, or the mirror unreachable).
set -uo pipefail

build=$(cd "${1:-build}" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=$build/gpuenv-portable
helper=$build/portable/gpuenv-kubelet
compat_test=$build/tests/glibc_compat_test
CEILING=2.28
SUITE=bullseye
MIRROR=${GPUENV_TEST_MIRROR:-http://deb.debian.org/debian}
cache=${GPUENV_TEST_CACHE:-/var/cache/gpuenv-test}
failures=0
say() { echo "portable: $*"; }
fail() { say "FAIL $*"; failures=$((failures + 1)); }

for f in "$bin" "$helper" "$compat_test" "$build/fake/libnvidia-ml.so.1" "$build/fake/libcuda.so.1"; do
  [ -x "$f" ] || { say "FAIL $f is missing: build the default preset first"; exit 1; }
done

# ---- 1. the symbol ceiling and the libraries it needs
for f in "$bin" "$helper" "$compat_test"; do
  if out=$("$repo/docker/setup-image.sh" check-glibc "$f" "$CEILING" 2>&1); then say "ok   $out"
  else fail "$out"; objdump -T "$f" | grep -E 'GLIBC_2\.(29|[3-9][0-9])' | sed 's/^/  /'; fi
done
for f in "$bin" "$helper"; do
  needed=$(objdump -p "$f" | awk '/NEEDED/ {print $2}' | sort | tr '\n' ' ')
  extra=$(echo "$needed" | tr ' ' '\n' | grep -vxE 'libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux-x86-64\.so\.2|')
  if [ -z "$extra" ]; then say "ok   $(basename "$f") needs only glibc's libraries: $needed"
  else fail "$(basename "$f") needs libraries beyond glibc's: $extra"; fi
done
[ "$failures" -eq 0 ] || exit 1

# ---- 2. the old root filesystem, made once
skip() { say "SKIP the old-glibc run: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "chroot needs root; run ctest as root"
recipe=$( (declare -f; echo "$SUITE minbase") | sha256sum | cut -c1-12)
root=$cache/rootfs-$SUITE-$recipe
if [ ! -x "$root/bin/sh" ]; then
  command -v mmdebstrap >/dev/null || skip "no mmdebstrap (apt-get install mmdebstrap; make deps does)"
  curl -fsS -m 15 -o /dev/null "$MIRROR/dists/$SUITE/Release" ||
    skip "$MIRROR/dists/$SUITE/Release is unreachable (set GPUENV_TEST_MIRROR to a Debian mirror)"
  say "bootstrapping Debian 11 ($SUITE, minbase) from $MIRROR into $root (once, about a minute)"
  mkdir -p "$cache"
  rm -rf "$root.tmp"
  mmdebstrap --quiet --variant=minbase "$SUITE" "$root.tmp" "$MIRROR" || { fail "mmdebstrap $SUITE"; exit 1; }
  mv "$root.tmp" "$root"
fi
glibc=$(ls "$root"/lib/x86_64-linux-gnu/libc-*.so 2>/dev/null | sed 's/.*libc-\(.*\)\.so/\1/')
say "root filesystem $root: glibc $glibc"

stage=$root/opt/gpuenv-test
rm -rf "$stage"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/scenarios"
cp "$bin" "$stage/gpuenv"
cp "$helper" "$stage/gpuenv-kubelet"
cp "$compat_test" "$stage/"
cp "$build/fake/libnvidia-ml.so.1" "$build/fake/libcuda.so.1" "$stage/lib/"
cp "$repo/tests/fake_nvml/scenarios/h200.txt" "$stage/scenarios/"

in_root() {  # in_root COMMAND...: in the chroot, with /proc, /sys and /dev, in a private mount namespace
  unshare --mount --fork sh -c 'r=$1; shift
    mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" && mount --rbind /dev "$r/dev" &&
    exec chroot "$r" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root \
      GPUENV_NVML_LIBRARY=/opt/gpuenv-test/lib/libnvidia-ml.so.1 \
      GPUENV_CUDA_LIBRARY=/opt/gpuenv-test/lib/libcuda.so.1 \
      FAKE_NVML_SCENARIO=/opt/gpuenv-test/scenarios/h200.txt \
      FAKE_CUDA_SCENARIO=/opt/gpuenv-test/scenarios/h200.txt "$@"' sh "$root" "$@"
}
expect() {  # expect WHAT CODE TEXT COMMAND...: exit status CODE and TEXT in the output
  local what=$1 code=$2 text=$3; shift 3
  out=$(in_root "$@" 2>&1); rc=$?
  if [ "$rc" -eq "$code" ] && [[ $out == *"$text"* ]]; then say "ok   glibc $glibc: $what"
  else fail "glibc $glibc: $what: exit $rc (want $code), [$text] in:"; echo "$out" | sed 's/^/  /' | tail -n 15; fi
}
expect "glibc_compat_test" 0 "glibc_compat_test: ok" /opt/gpuenv-test/glibc_compat_test
expect "gpuenv detect" 0 "GPU 0  NVIDIA H200  cc 9.0" /opt/gpuenv-test/gpuenv detect
expect "gpuenv env" 0 "export TORCH_CUDA_ARCH_LIST='9.0'" /opt/gpuenv-test/gpuenv env
expect "gpuenv doctor (no /dev/nvidia*: an error; no python3: a warning)" 1 "no PyTorch found" /opt/gpuenv-test/gpuenv doctor
expect "a usage error (a C++ exception, caught)" 2 "Run with --help" /opt/gpuenv-test/gpuenv --no-such-flag
expect "gpuenv-kubelet: gRPC answers for a socket nobody serves" 0 '"code":14,"error":"unavailable' \
  /opt/gpuenv-test/gpuenv-kubelet /nonexistent/kubelet.sock 1000 1048576

[ "$failures" -eq 0 ] && say "passed" || say "$failures failed"
[ "$failures" -eq 0 ]

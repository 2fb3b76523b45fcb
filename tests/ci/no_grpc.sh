#!/bin/sh
# ctest startup.no_grpc: no_grpc.sh BIN... HELPER
# Each BIN (gpuenv, gpuenv-portable) neither loads gRPC, protobuf or abseil
# at start (a NEEDED entry) nor holds them (their symbols): their static
# constructors would cost every command's start-up. HELPER (gpuenv-kubelet,
# the client export runs) must show them, so a probe that finds nothing
# anywhere fails too.
set -u
pattern='grpc_init|grpc_completion_queue|_ZN6google8protobuf|_ZN4absl'
holds() {
  { readelf -d "$1" 2>/dev/null | grep NEEDED | grep -E 'grpc|protobuf|absl|gpr'
    nm "$1" 2>/dev/null; nm -D "$1" 2>/dev/null; } | grep -Eq "$pattern|NEEDED"
}
status=0
helper=
for f in "$@"; do helper=$f; done
for f in "$@"; do
  [ -f "$f" ] || { echo "no_grpc: $f is missing: build it first"; exit 1; }
  if [ "$f" = "$helper" ]; then
    holds "$f" || { echo "no_grpc: $f shows no gRPC: the probe cannot see it (pattern $pattern)"; status=1; }
  elif holds "$f"; then
    echo "no_grpc: $f loads or holds gRPC, protobuf or abseil: only gpuenv-kubelet may (CMakeLists.txt gpuenv_kubelet_helper)"
    status=1
  fi
done
[ $status -eq 0 ] && echo "no_grpc: $# binaries checked"
exit $status

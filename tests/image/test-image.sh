#!/bin/bash
# make test-image: build docker/Dockerfile for real with podman, offline, and
# start containers from it, checked with real clients on 127.0.0.1.
# docs/container.md, "The image test", says what each check shows.
#
#   tests/image/test-image.sh [--from-source] [BUILD_DIR]
#       BUILD_DIR (default build/): the stand-in NVML, libcuda and bench plugin
#       it built, and the portable gpuenv and bench plugin it linked, which the
#       image is built from (GPUENV_FROM=prebuilt: the project is compiled once).
#       --from-source: the image's own build stage compiles gpuenv, as a plain
#       `docker build -f docker/Dockerfile .` does.
set -uo pipefail
from=prebuilt
if [ "${1:-}" = --from-source ]; then from=source; shift; fi

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
export CONTAINERS_CONF=$repo/tests/image/containers.conf
IMAGE=localhost/gpuenv:test
DEVEL=localhost/gpuenv:test-devel
BASE=localhost/gpuenv-test-base:12
CUDA=localhost/gpuenv-test-cuda:13
run_id=gpuenv-test-$$
work=$(mktemp -d "/tmp/$run_id.XXXXXX")
failures=0
started=$SECONDS

say() { echo "test-image: $*"; }
pass() { say "ok   $*"; }
fail() { say "FAIL $*"; failures=$((failures + 1)); }
check() {  # check WHAT COMMAND...: passes when COMMAND succeeds
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; return 1; fi
}
eq() { [ "$1" = "$2" ] || { say "     expected [$2], got [$1]"; return 1; }; }
has() { case $1 in *"$2"*) return 0 ;; esac; say "     [$2] not in: $1"; return 1; }

cleanup() {
  podman pod ps --format '{{.Name}}' | grep "^$run_id" | xargs -r podman pod rm -f -t 0 >/dev/null 2>&1
  podman ps -a --format '{{.Names}}' | grep "^$run_id" | xargs -r podman rm -f -t 0 >/dev/null 2>&1
  podman volume ls --format '{{.Name}}' | grep "^$run_id" | xargs -r podman volume rm -f >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# until SECONDS COMMAND...: retries COMMAND once a second.
until_ok() {
  local limit=$1; shift
  for _ in $(seq "$limit"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  return 1
}

[ "$(id -u)" -eq 0 ] || { say "needs root: rootful podman builds and runs the image (sudo make test-image)"; exit 1; }
for f in fake/libnvidia-ml.so.1 fake/libcuda.so.1 fake/libgpuenv-bench.so; do
  [ -f "$build/$f" ] || { say "no $build/$f: run make build first"; exit 1; }
done

# The build context: the repository, or with GPUENV_FROM=prebuilt only what
# the image takes besides gpuenv (docker/, python/) and prebuilt/ holding the
# portable binary and plugin, checked against the runtime image's glibc first
# (as the build-source stage checks its own).
context=$repo
if [ $from = prebuilt ]; then
  for f in gpuenv-portable portable/gpuenv-kubelet portable/libgpuenv-bench.so; do
    [ -f "$build/$f" ] || { say "no $build/$f: make build links it (the static archives come with make deps)"; exit 1; }
  done
  context=$work/context
  mkdir -p "$context/prebuilt" "$context/docker"
  cp -r "$repo/python" "$context/"
  cp "$repo/docker/setup-image.sh" "$repo/docker/healthcheck.py" "$context/docker/"
  cp "$build/gpuenv-portable" "$context/prebuilt/gpuenv"
  cp "$build/portable/libgpuenv-bench.so" "$build/portable/gpuenv-kubelet" "$context/prebuilt/"
  "$repo/docker/setup-image.sh" check-glibc "$context/prebuilt/gpuenv" 2.28 >/dev/null &&
    "$repo/docker/setup-image.sh" check-glibc "$context/prebuilt/gpuenv-kubelet" 2.28 >/dev/null &&
    "$repo/docker/setup-image.sh" check-glibc "$context/prebuilt/libgpuenv-bench.so" 2.35 >/dev/null ||
    { say "the prebuilt binaries need a newer glibc than the image has"; exit 1; }
fi

# ---- the images
"$repo/tests/image/bases.sh" || { say "could not make the base images"; exit 1; }
build_image() {  # build_image TAG LOG [podman build flags]: docker/Dockerfile as it is
  local tag=$1 log=$2; shift 2
  podman build --format docker -f "$repo/docker/Dockerfile" \
    --ignorefile "$repo/docker/Dockerfile.dockerignore" \
    --build-arg BASE_IMAGE=$BASE --build-arg BUILD_IMAGE=$BASE --build-arg CUDA_IMAGE=$CUDA \
    --build-arg JUPYTER_FROM=debian --build-arg GPUENV_FROM=$from "$@" -t "$tag" "$context" >"$log" 2>&1 && return 0
  tail -n 40 "$log"
  return 1
}
say "building $IMAGE from docker/Dockerfile (GPUENV_FROM=$from)"
build_start=$SECONDS
build_image $IMAGE "$work/build.log" || { fail "podman build (log above)"; exit 1; }
pass "podman build in $((SECONDS - build_start)) s"
jupyter_line=$(grep -m1 'setup-image.sh: jupyter:' "$work/build.log" || echo "setup-image.sh: jupyter: (cached layer)")
say "${jupyter_line#*setup-image.sh: }"
build_start=$SECONDS
build_image $DEVEL "$work/devel.log" --target devel || { fail "podman build --target devel (log above)"; exit 1; }
pass "podman build --target devel in $((SECONDS - build_start)) s"
devel_line=$(grep -m1 'setup-image.sh: devel:' "$work/devel.log" || echo "setup-image.sh: devel: (cached layer)")
say "${devel_line#*setup-image.sh: }"

# The stand-in GPUs reach the container as the container toolkit injects the
# real libraries: a bind mount, named by GPUENV_NVML_LIBRARY/GPUENV_CUDA_LIBRARY.
# No systemd here to time HEALTHCHECKs: the test runs them with `podman healthcheck run`.
stand_in=(--health-interval=disable
          -v "$build/fake:/opt/gpuenv-test/lib:ro"
          -v "$repo/tests/fake_nvml/scenarios:/opt/gpuenv-test/scenarios:ro"
          -e GPUENV_NVML_LIBRARY=/opt/gpuenv-test/lib/libnvidia-ml.so.1
          -e GPUENV_CUDA_LIBRARY=/opt/gpuenv-test/lib/libcuda.so.1
          -e FAKE_NVML_SCENARIO=/opt/gpuenv-test/scenarios/h200.txt
          -e FAKE_CUDA_SCENARIO=/opt/gpuenv-test/scenarios/h200.txt)
cache=$run_id-cache
podman volume create "$cache" >/dev/null
prun() { podman run --rm "${stand_in[@]}" -v "$cache:/cache" "$@"; }

# ---- a batch command: uid 1000, the plan, exit codes and SIGTERM
out=$(prun $IMAGE python3 -c 'import os, sys; print(os.getuid(), os.environ.get("TORCH_CUDA_ARCH_LIST"), os.environ.get("GPUENV_CACHE_ROOT")); sys.exit(7)' 2>"$work/job.err")
code=$?
check "batch job runs as uid 1000 with the plan (the base image's TORCH_CUDA_ARCH_LIST replaced)" eq "$out" "1000 9.0 /cache"
check "batch job's exit code comes back" eq "$code" 7
check "init's log says who the command runs as" has "$(cat "$work/job.err")" "gpuenv"
out=$(prun -e TORCH_CUDA_ARCH_LIST=8.0 $IMAGE sh -c 'echo "$TORCH_CUDA_ARCH_LIST"; gpuenv explain' 2>/dev/null)
check "a TORCH_CUDA_ARCH_LIST of the user's own is kept" eq "$(echo "$out" | head -n1)" "8.0"
check "explain says it is the user's" has "$out" "kept yours"
out=$(prun --entrypoint gpuenv $IMAGE explain 2>/dev/null)  # not under init, which applied the plan
check "explain names the base image's value it replaced" has "$out" "the container image's base value"
out=$(prun -e GPUENV_RUN_AS_ROOT=1 $IMAGE python3 -c 'import os; print(os.getuid())' 2>"$work/root.err")
check "GPUENV_RUN_AS_ROOT=1 keeps root" eq "$out" 0
check "init logs that it keeps root" has "$(cat "$work/root.err")" "GPUENV_RUN_AS_ROOT"

podman run -d --name "$run_id-sleep" "${stand_in[@]}" $IMAGE python3 -c 'import time; time.sleep(600)' >/dev/null
until_ok 30 sh -c "podman top $run_id-sleep args | grep -q time.sleep"
stop_start=$SECONDS
podman stop -t 20 "$run_id-sleep" >/dev/null
code=$(podman inspect --format '{{.State.ExitCode}}' "$run_id-sleep")
check "podman stop: SIGTERM reaches the job, the container exits 143" eq "$code" 143
check "podman stop did not need SIGKILL" test $((SECONDS - stop_start)) -lt 15

# ---- one cache root on the /cache volume, kept from one container to the next
prun -e GPUENV_BENCH_PLUGIN=/opt/gpuenv-test/lib/libgpuenv-bench.so $IMAGE \
  sh -c 'gpuenv bench >/dev/null && touch "$TRITON_CACHE_DIR/kernel-from-first"' >"$work/first.out" 2>&1
check "first container: bench and a Triton cache entry" eq "$?" 0 || cat "$work/first.out"
out=$(prun $IMAGE sh -c 'ls "$TRITON_CACHE_DIR"; gpuenv bench --history' 2>&1)
check "second container finds the first one's cache entry" has "$out" "kernel-from-first"
check "second container finds the first one's measurements" has "$out" "gemm"
out=$(prun $IMAGE sh -c 'find /cache ! -user gpuenv | head -n 3')
check "everything under /cache belongs to gpuenv" eq "$out" ""

# A root-owned /cache (a bind mount, or a volume a root job wrote) is handed to gpuenv.
mkdir -p "$work/rootcache/triton/old" && chmod 0755 "$work/rootcache"
out=$(podman run --rm "${stand_in[@]}" -v "$work/rootcache:/cache" $IMAGE \
  sh -c 'touch "$TRITON_CACHE_DIR/x" /cache/triton/old/y && echo writable' 2>&1)
check "a root-owned /cache is made writable for gpuenv" has "$out" "writable"

# ---- no VOLUME: a container started without -v leaves no anonymous volume
for image in $IMAGE $DEVEL; do
  check "$image declares no VOLUME" eq "$(podman image inspect --format '{{len .Config.Volumes}}' $image)" 0
done

# ---- pip as the user (no root, a PEP 668 base) lands on /cache and outlives the container
src=(-v "$repo/tests/image:/opt/gpuenv-test/src:ro")
out=$(prun "${src[@]}" $IMAGE sh -c 'cp -r /opt/gpuenv-test/src/pip-package "$HOME/p" &&
  pip install --no-cache-dir --no-index --no-build-isolation "$HOME/p"' 2>&1)
code=$?
check "pip install as gpuenv works" eq "$code" 0 || echo "$out" | tail -n 20
out=$(prun $IMAGE sh -c 'gpuenv-test-pip' 2>&1)
check "a second container on the same /cache runs its script and imports it" \
  has "$out" "gpuenv-test-pip from /cache/pip/lib/python3"
out=$(prun -e GPUENV_RUN_AS_ROOT=1 $IMAGE python3 -c \
  'import importlib.util, site; print(site.getusersitepackages(), importlib.util.find_spec("gpuenv_test_pip"))' 2>&1)
check "root's Python does not read the user's packages" has "$out" "/root/.local/lib/python3"
check "root's Python does not find the user's package" has "$out" " None"

# ---- the devel target: a CUDA extension compiled by nvcc as gpuenv, with the image's Python,
# for the plan's TORCH_CUDA_ARCH_LIST (9.0); imported from /cache by the runtime image
out=$(prun "${src[@]}" $DEVEL sh -c 'cp -r /opt/gpuenv-test/src/cuda-extension "$HOME/x" && cd "$HOME/x" &&
  pip install -v --no-cache-dir --no-index --no-build-isolation . && id -un' 2>&1)
code=$?
check "devel: pip builds the CUDA extension as gpuenv" eq "$code" 0 || echo "$out" | tail -n 30
check "devel: nvcc compiled it for sm_90 (the plan's TORCH_CUDA_ARCH_LIST)" \
  has "$out" "/usr/local/cuda/bin/nvcc -c kernel.cu -o"
check "devel: the -gencode is the plan's" has "$out" "-gencode=arch=compute_90,code=sm_90"
check "devel: the build ran as gpuenv" has "$out" $'\ngpuenv'
cuda_version=$("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
read -r major minor <<<"$cuda_version"
out=$(prun $IMAGE sh -c 'so=$(python3 -c "import gpuenv_test_ext as e; print(e.__file__)") && echo "$so" &&
  python3 -c "import gpuenv_test_ext as e; print(e.runtime_version(), *e.add_one())" && gpuenv inspect "$so"' 2>&1)
check "the runtime image imports the extension from /cache" has "$out" "/cache/pip/lib/python3"
check "its host code runs: the CUDA $major.$minor runtime, and the kernel launch reports a CUDA error (no GPU here)" \
  has "$out" "$((major * 1000 + minor * 10)) cuda"
check "gpuenv inspect finds its sm_90 cubin" has "$out" "sm_90: 1 cubin"

# ---- bench and doctor inside the image
out=$(prun $IMAGE gpuenv bench --help 2>&1)
check "gpuenv bench --help" has "$out" "--only"
check "the image carries the bench plugin" podman run --rm --entrypoint test $IMAGE -f /usr/local/lib/gpuenv/libgpuenv-bench.so
# export's kubelet client, where gpuenv looks for it (../lib/gpuenv/ from
# /usr/local/bin), runs in the image: a socket nobody serves is its gRPC's
# "unavailable", in the answer export reads.
out=$(podman run --rm --entrypoint /usr/local/lib/gpuenv/gpuenv-kubelet $IMAGE /nonexistent/kubelet.sock 1000 1048576 2>&1)
check "the image's kubelet client runs and answers in its JSON" has "$out" '"code":14,"error":"unavailable'
out=$(prun $IMAGE gpuenv doctor 2>&1)
code=$?
# Stand-in libraries come without /dev/nvidia*: doctor must say so (exit 1).
check "gpuenv doctor runs and names the missing device nodes (exit 1)" eq "$code" 1 || echo "$out"
check "doctor sees the stand-in H200 through NVML" has "$out" "NVML sees 1 GPU"
check "doctor finds the stand-in torch" has "$out" "torch 2.14.0+cu130 (CUDA 13.0)"
check "doctor's error is the device nodes" has "$out" "error   device_nodes"

# ---- deploy/kubernetes/daemonset.yaml's pod, played with `podman kube play`
# (tests/image/daemonset-pod.py makes the Pod from the DaemonSet's template).
kube_pod=$run_id-kube
features=$work/features.d
mkdir -p "$features" && chmod 0755 "$features"  # as a node's: root's, 0755
kube_args=()
if podman run --rm --entrypoint gpuenv $IMAGE export --help >/dev/null 2>&1; then exporter=yes
else exporter=no; kube_args=(--idle exporter); fail "gpuenv export --help fails in the image: the exporter container idles, /metrics cannot be checked"; fi
"$repo/tests/image/daemonset-pod.py" "$repo/deploy/kubernetes/daemonset.yaml" $IMAGE "$features" \
  "$build/fake" "$repo/tests/fake_nvml/scenarios" "$kube_pod" "${kube_args[@]}" >"$work/pod.yaml"
kube_play() { podman kube play "$work/pod.yaml" >"$work/kube.log" 2>&1; }
check "the DaemonSet's pod plays (podman kube play)" kube_play || cat "$work/kube.log"
until_ok 60 test -s "$features/gpuenv"
labels=$(cat "$features/gpuenv" 2>/dev/null)
check "labels: the feature file appears in the hostPath features.d" has "$labels" "# +expiry-time="
check "labels: the stand-in H200 is labelled" has "$labels" "gpuenv.dev/gpu.product=NVIDIA-H200"
check "labels: no dot-file is left behind" eq "$(find "$features" -name '.*' -type f | wc -l)" 0
in_pod() { podman exec "$kube_pod-$1" sh -c "$2" 2>&1; }
check "exporter container is uid 0 with no capability (it connects to root's kubelet socket)" \
  eq "$(in_pod exporter 'id -u; grep -E "^Cap(Eff|Bnd)" /proc/1/status' | tr -s '\t\n' '  ')" "0 CapEff: 0000000000000000 CapBnd: 0000000000000000 "
check "labels container is uid 0 with no capability (it writes root's features.d)" \
  eq "$(in_pod labels 'id -u; grep -E "^Cap(Eff|Bnd)" /proc/1/status' | tr -s '\t\n' '  ')" "0 CapEff: 0000000000000000 CapBnd: 0000000000000000 "
for c in exporter labels; do
  check "$c: root filesystem is read-only" has "$(in_pod $c 'touch /usr/local/bin/x')" "Read-only file system"
  check "$c: no new privileges" eq "$(in_pod $c "awk '/^NoNewPrivs/ {print \$2}' /proc/1/status")" 1
done
if [ $exporter = yes ]; then
  metrics() { in_pod exporter 'python3 -c "import urllib.request; print(urllib.request.urlopen(\"http://127.0.0.1:9400/metrics\", timeout=5).read().decode())"'; }
  until_ok 30 sh -c "podman exec $kube_pod-exporter python3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:9400/metrics\", timeout=5)'"
  check "exporter: /metrics answers with gpuenv_gpu_up" has "$(metrics)" 'gpuenv_gpu_up{'
  check "exporter: the DCGM series carry the node's name as hostname (dcgm-exporter 4.x)" has "$(metrics)" 'hostname="stand-in-node"'
fi
podman kube down "$work/pod.yaml" >/dev/null 2>&1
check "podman kube down removes the pod" eq "$(podman pod ps --filter name="$kube_pod" --format '{{.Name}}')" ""

# ---- deploy/kubernetes/{pytorchjob,jobset}.yaml's pods, played: the restricted
# securityContext for real (tests/image/job-pod.py makes each Pod).
for job in pytorchjob jobset; do
  job_pod=$run_id-$job
  "$repo/tests/image/job-pod.py" "$repo/deploy/kubernetes/$job.yaml" $IMAGE "$build/fake" \
    "$repo/tests/fake_nvml/scenarios" "$job_pod" >"$work/$job.yaml"
  job_play() { podman kube play "$work/$job.yaml" >"$work/$job.log" 2>&1; }
  check "$job: its pod plays (podman kube play)" job_play || cat "$work/$job.log"
  until_ok 30 podman exec "$job_pod-pytorch" true
  in_job() { podman exec "$job_pod-pytorch" sh -c "$1" 2>&1; }
  check "$job: runs as uid 1000, gid 1000" eq "$(in_job 'id -u; id -g' | tr '\n' ' ')" "1000 1000 "
  check "$job: no capability, no new privileges, seccomp filter" \
    eq "$(in_job 'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/1/status' | tr -s '\t\n' '  ')" \
    "CapEff: 0000000000000000 NoNewPrivs: 1 Seccomp: 2 "
  check "$job: gpuenv run applies the plan as uid 1000" has "$(in_job 'gpuenv run -- env')" "TORCH_CUDA_ARCH_LIST=9.0"
  check "$job: the cache volume is writable" eq "$(in_job 'touch /cache/x && echo ok')" ok
  podman kube down "$work/$job.yaml" >/dev/null 2>&1
done

# ---- Jupyter: token, not root, 0600, healthcheck
jport=$(free_port)
token=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
podman run -d --name "$run_id-jupyter" "${stand_in[@]}" -v "$cache:/cache" -p "127.0.0.1:$jport:8888" \
  -e GPUENV_JUPYTER_TOKEN="$token" $IMAGE >/dev/null
status() { curl -s -o /dev/null -w '%{http_code}' "$@" "http://127.0.0.1:$jport/api/status"; }
until_ok 90 sh -c "curl -sf -o /dev/null http://127.0.0.1:$jport/api"
check "Jupyter: /api/status without the token is 403" eq "$(status)" 403
check "Jupyter: /api/status with the token is 200" eq "$(status -H "Authorization: token $token")" 200
user=$(podman top "$run_id-jupyter" user args | awk '/jupyter-/ && !/gpuenv serve/ {print $1; exit}')
check "Jupyter's server process is not root" eq "$user" gpuenv
mode=$(podman exec "$run_id-jupyter" stat -c '%a %U' /home/gpuenv/.local/share/gpuenv/jupyter_token)
check "the token file is 0600, gpuenv's" eq "$mode" "600 gpuenv"
check "HEALTHCHECK passes while Jupyter serves" podman healthcheck run "$run_id-jupyter"
jpid=$(podman top "$run_id-jupyter" pid args | awk '/jupyter-/ && !/gpuenv serve/ {print $1; exit}')
check "Jupyter (and so its kernels) has pip's user base on /cache" \
  has "$(podman exec -u gpuenv "$run_id-jupyter" cat "/proc/$jpid/environ" | tr '\0' '\n')" "PYTHONUSERBASE=/cache/pip"
podman exec -u 0 "$run_id-jupyter" kill -STOP "$jpid"
if podman healthcheck run "$run_id-jupyter" >/dev/null 2>&1; then fail "HEALTHCHECK fails while Jupyter does not answer"
else pass "HEALTHCHECK fails while Jupyter does not answer"; fi
podman exec -u 0 "$run_id-jupyter" kill -CONT "$jpid"

# ---- SSH: key login as gpuenv with the plan; no password, no root, no key -> 78
ssh-keygen -q -t ed25519 -N '' -f "$work/key"
sport=$(free_port)
podman run -d --name "$run_id-ssh" "${stand_in[@]}" -v "$cache:/cache" -p "127.0.0.1:$sport:22" \
  -e GPUENV_SSH_AUTHORIZED_KEYS="$(cat "$work/key.pub")" $IMAGE gpuenv serve ssh >/dev/null
ssh_opts=(-p "$sport" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes
          -o ConnectTimeout=10 -o LogLevel=ERROR)
ssh_greets() { python3 -c 'import socket, sys; s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2); s.settimeout(2); sys.exit(0 if s.recv(8).startswith(b"SSH-") else 1)' "$sport"; }
until_ok 60 ssh_greets
out=$(ssh "${ssh_opts[@]}" -i "$work/key" gpuenv@127.0.0.1 'id -un; env' 2>&1)
check "SSH key login as gpuenv" has "$out" $'gpuenv\n'
check "the SSH session has the plan (TORCH_CUDA_ARCH_LIST)" has "$out" "TORCH_CUDA_ARCH_LIST=9.0"
check "the SSH session has GPUENV_CACHE_ROOT" has "$out" "GPUENV_CACHE_ROOT=/cache"
check "the SSH session has pip's user base on /cache" has "$out" "PYTHONUSERBASE=/cache/pip"
out=$(ssh "${ssh_opts[@]}" -i "$work/key" gpuenv@127.0.0.1 'gpuenv-test-pip' 2>&1)
check "the SSH session runs what pip installed" has "$out" "gpuenv-test-pip from /cache/pip"
out=$(ssh "${ssh_opts[@]}" -o PubkeyAuthentication=no -o PreferredAuthentications=password,keyboard-interactive \
  gpuenv@127.0.0.1 true 2>&1)
check "SSH password login is refused" has "$out" "Permission denied"
out=$(ssh "${ssh_opts[@]}" -i "$work/key" root@127.0.0.1 true 2>&1)
check "SSH root login is refused" has "$out" "Permission denied"
podman run --rm "${stand_in[@]}" $IMAGE gpuenv serve ssh >/dev/null 2>&1
check "serve ssh with no key exits 78" eq "$?" 78

say "$failures failure(s), $((SECONDS - started)) s in all"
[ "$failures" -eq 0 ]

#!/bin/bash
# A real Slurm on loopback: munged, slurmctld and slurmd (Debian's), started
# here as root with their own key, socket, ports and directories; one node
# with two stand-in GPUs (tests/fake_nvml, scenario l4_2numa: GPU 0 near CPU
# 0, GPU 1 near CPU 1). Then `srun -N1 -n2 gpuenv run` three ways (GPUs by
# gres for the step, one GPU per task, no gres), checking each task's
# CUDA_VISIBLE_DEVICES, ranks, OMP_NUM_THREADS and CPU affinity, and that
# explain names Slurm; then a batch script, which must bind nothing. Last,
# `gpuenv export` on a plain job with no gpuenv in it (its real task named on
# stand-in GPU 0): the job's series must carry its Slurm job id, told from the
# task's /proc/PID/environ, and dcgm's GPU_UTIL its hpc_job. Every daemon, the
# exporter and the plain job are stopped on exit.
#   tests/slurm/run.sh [BUILD_DIR]     (ctest runs it as slurm.srun)
# Exit 0: passed; 77: skipped (not root); anything else: failed.
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
tests=$(cd "$(dirname "$0")/.." && pwd)
gpuenv=$build/gpuenv
scenario=$tests/fake_nvml/scenarios/l4_2numa.txt

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the Slurm test starts munged, slurmctld and slurmd as root; run it as root"
  exit 77
fi
for tool in munged mungekey slurmctld slurmd srun scontrol sinfo; do
  command -v "$tool" >/dev/null || {
    echo "FAIL: $tool is missing: apt-get install munge slurmctld slurmd slurm-client (make deps does)"
    exit 1
  }
done
for f in "$gpuenv" "$build/fake/libnvidia-ml.so.1" "$build/fake/libcuda.so.1"; do
  [ -e "$f" ] || { echo "FAIL: $f is missing: build the gpuenv and fake_nvml/fake_cuda targets first"; exit 1; }
done

T=$(mktemp -d /tmp/gpuenv-slurm.XXXXXX)
chmod 755 "$T"
pids=()
failed=0
plain_job="" plain_pid=""  # the job without gpuenv in it (the exporter's section), and its task

cleanup() {
  local code=$?
  # The plain job first, while slurmctld and slurmd are still there to end it;
  # its task is gone before the daemons are (none left running on the host).
  if [ -n "$plain_job" ]; then
    scancel "$plain_job" 2>/dev/null || true
    if [ -n "$plain_pid" ]; then
      for _ in $(seq 50); do kill -0 "$plain_pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$plain_pid" 2>/dev/null || true
    fi
  fi
  # Then the exporter (last in pids) and the daemons, newest first.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$code" -ne 0 ] && [ "$code" -ne 77 ]; then
    for log in "$T"/log/*.log; do [ -f "$log" ] && { echo "--- $log (last lines)"; tail -n 15 "$log"; }; done
  fi
  rm -rf "$T"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Polls `$@` up to 20 s.
wait_for() {
  local what=$1; shift
  for _ in $(seq 200); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "FAIL: $what did not come up within 20 s"
  exit 1
}

mkdir -p "$T"/{etc,log,state,spool,munge,dev}
port=$((20000 + $$ % 20000))
node=gpuenvnode

# munge: a fresh key, its own socket.
mungekey --create --keyfile="$T/munge/munge.key" >/dev/null
chmod 600 "$T/munge/munge.key"
munged --foreground --force --socket="$T/munge/munge.socket" --key-file="$T/munge/munge.key" \
  --pid-file="$T/munge/munged.pid" --seed-file="$T/munge/munged.seed" \
  --log-file="$T/log/munged.log" >>"$T/log/munged.out" 2>&1 &
pids+=($!)
wait_for "munged" test -S "$T/munge/munge.socket"

# Two stand-in GPU device files: Slurm's gres wants character devices
# (mknod, major 195 as the NVIDIA driver's); nothing ever opens them.
for i in 0 1; do mknod "$T/dev/nvidia$i" c 195 "$i"; done
cat > "$T/etc/gres.conf" <<GRES
Name=gpu File=$T/dev/nvidia[0-1]
GRES
cat > "$T/etc/slurm.conf" <<CONF
ClusterName=gpuenv
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/state/slurmctld.pid
SlurmdPidFile=$T/spool/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
GresTypes=gpu
NodeName=$node NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=$(nproc) Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$T/etc/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >>"$T/log/slurmctld.out" 2>&1 &
pids+=($!)
wait_for "slurmctld" scontrol ping
slurmd -D -N "$node" -f "$SLURM_CONF" >>"$T/log/slurmd.out" 2>&1 &
pids+=($!)
wait_for "slurmd (node $node idle)" sh -c "sinfo -h -n $node -o %t | grep -qx idle"

export GPUENV_NVML_LIBRARY=$build/fake/libnvidia-ml.so.1 GPUENV_CUDA_LIBRARY=$build/fake/libcuda.so.1
export FAKE_NVML_SCENARIO=$scenario FAKE_CUDA_SCENARIO=$scenario
# The launcher is under test here, not the watcher (tests/watch_test.cc): no
# job records, and no last-verdict line in the tasks' output; nothing in $HOME.
export GPUENV_WATCH=0 GPUENV_CACHE_ROOT=$T/cache
unset CUDA_VISIBLE_DEVICES LOCAL_RANK LOCAL_WORLD_SIZE RANK WORLD_SIZE OMP_NUM_THREADS

# One task's report: its Slurm ranks, what gpuenv run gave the command, and
# what explain said about it.
cat > "$T/task.sh" <<'TASK'
#!/bin/sh
out=$1/task.$SLURM_PROCID
"$2" explain > "$out.explain" 2>&1
"$2" explain --json > "$out.json" 2>/dev/null
"$2" run -- sh -c 'printf "procid=%s localid=%s cvd=%s omp=%s %s\n" "$SLURM_PROCID" "$SLURM_LOCALID" \
  "${CUDA_VISIBLE_DEVICES-unset}" "$OMP_NUM_THREADS" "$(grep Cpus_allowed_list /proc/self/status | tr -d "\t")"' > "$out.run" 2>&1
exec "$2" run -- python3 "$1/rendezvous.py" > "$out.ranks" 2>&1
TASK
# env:// as torch.distributed does it, without torch: rank 0 listens on
# MASTER_PORT, the others connect and say their rank; each prints what it saw.
cat > "$T/rendezvous.py" <<'PY'
import os, socket, time
e = {k: os.environ.get(k, "unset") for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
rank, world, port = int(e["RANK"]), int(e["WORLD_SIZE"]), int(e["MASTER_PORT"])
got = []
if rank == 0:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port)); s.listen(world); s.settimeout(20)
    for _ in range(world - 1):
        c, _ = s.accept(); got.append(c.recv(16).decode()); c.close()
else:
    for _ in range(200):
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=1); break
        except OSError:
            time.sleep(0.1)
    c.sendall(str(rank).encode()); c.close()
print(" ".join(f"{k}={v}" for k, v in e.items()), "peers=" + ",".join(sorted(got)), "job=" + os.environ["SLURM_JOB_ID"])
PY
chmod +x "$T/task.sh"

check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "  ok   $1: $3"; else echo "  FAIL $1: expected '$2', got '$3'"; failed=1; fi
}

# run_case NAME "SRUN FLAGS" CVD0 CVD1: task i must be pinned to CPU i (the
# CPU near its GPU), with the CUDA_VISIBLE_DEVICES given for it.
run_case() {
  local name=$1 flags=$2
  echo "$name: srun -N1 -n2 $flags"
  rm -f "$T"/task.*.{run,json,explain,ranks}
  # shellcheck disable=SC2086
  if ! timeout 30 srun -N1 -n2 $flags "$T/task.sh" "$T" "$gpuenv" > "$T/log/srun.out" 2>&1; then
    echo "  FAIL srun: $(tail -n 5 "$T/log/srun.out")"; failed=1; return
  fi
  for i in 0 1; do
    local cvd; cvd=$([ "$i" = 0 ] && echo "$3" || echo "$4")
    # The command's line (run's stderr, a warning included, shares the file).
    check "task $i run" "procid=$i localid=$i cvd=$cvd omp=1 Cpus_allowed_list:$i" "$(grep '^procid=' "$T/task.$i.run")"
    check "task $i plan" "[$i]" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpu_binding"]["cpus"])' "$T/task.$i.json" | tr -d ' ')"
    check "task $i explain" "launcher: Slurm (SLURM_PROCID=$i, SLURM_LOCALID=$i, SLURM_NTASKS=2" \
      "$(grep -o '^launcher: Slurm (SLURM_PROCID=[0-9]*, SLURM_LOCALID=[0-9]*, SLURM_NTASKS=[0-9]*' "$T/task.$i.explain")"
    local job; job=$(grep -o 'job=[0-9]*' "$T/task.$i.ranks" | cut -d= -f2)
    # With one GPU per task, task 1's LOCAL_RANK=1 is no device index: run
    # and explain warn (decide/launcher_env.h local_rank_beyond_visible).
    local warns=no; grep -q 'torch.cuda.set_device(LOCAL_RANK) fails' "$T/task.$i.explain" && warns=yes
    check "task $i LOCAL_RANK warning" "$([ "$i" = 1 ] && [ "$cvd" = 1 ] && echo yes || echo no)" "$warns"
    local peers; peers=$([ "$i" = 0 ] && echo 1 || echo "")
    check "task $i env:// rendezvous" \
      "RANK=$i LOCAL_RANK=$i WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=$node MASTER_PORT=$((15000 + ${job:-0} % 10000)) peers=$peers job=$job" \
      "$(grep '^RANK=' "$T/task.$i.ranks")"
    check "task $i engine" "slurm 2 2" \
      "$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["launcher"]; print(l["engine"], l["world_size"], l["local_world_size"])' "$T/task.$i.json")"
  done
}

start=$(date +%s)
run_case "GPUs by gres for the step" "--gres=gpu:2" "0,1" "0,1"
run_case "one GPU per task" "--gpus-per-task=1" "0" "1"
run_case "no gres: the local rank picks the GPU" "" "unset" "unset"
# The batch script has SLURM_PROCID=0 too, but is no task: no binding.
echo "the batch script: sbatch -n2 --gres=gpu:2"
printf '#!/bin/sh\n"%s" explain --json > "%s/batch.json" 2>&1\n' "$gpuenv" "$T" > "$T/batch.sh"
# (sbatch --wait polls every few seconds; squeue answers at once)
if job=$(sbatch --parsable -n2 --gres=gpu:2 -o "$T/log/batch.out" "$T/batch.sh" 2> "$T/log/sbatch.out") &&
   wait_for "batch job $job to end" sh -c "[ -z \"\$(squeue -h -j $job 2>/dev/null)\" ]"; then
  check "batch plan" "Slurm batch script, binding None, GPUs bound 0,1" "$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); l=p["launcher"]; print(l["recognised"][0]["name"] + ", binding", p["cpu_binding"], ", GPUs bound", l["gpus_bound"])' "$T/batch.json" 2>&1 | sed 's/ ,/,/g')"
else
  echo "  FAIL sbatch: $(tail -n 5 "$T/log/sbatch.out")"; failed=1
fi
echo "all cases took $(( $(date +%s) - start )) s"

# gpuenv export attributes an unwrapped Slurm job (issue 38): a plain job with
# no gpuenv in it, its real task on stand-in GPU 0 (the stand-in NVML's process
# table names its PID), the exporter reading the real /proc. proctrack/linuxproc
# puts the task in no Slurm cgroup, so its job is told by SLURM_JOB_ID in
# /proc/PID/environ: the path this proves.
echo "gpuenv export and a plain job: srun --job-name=plain sleep 120"
start=$(date +%s)
plain_task() {  # the job's task: the sleep whose environ names the job
  local p
  for p in $(scontrol listpids "$plain_job" 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1}'); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sleep ] &&
      tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_JOB_ID=$plain_job" && { echo "$p"; return 0; }
  done
  return 1
}
metric_line() {  # metric_line NAME LABEL=VALUE...: a line of the exporter's /metrics with them all
  local name=$1 body line l ok; shift
  body=$(python3 -c 'import sys, urllib.request as u
sys.stdout.write(u.build_opener(u.ProxyHandler({})).open(sys.argv[1], timeout=5).read().decode())' \
         "http://127.0.0.1:$export_port/metrics" 2>/dev/null) || return 1
  while IFS= read -r line; do
    case "$line" in "$name{"*) ;; *) continue ;; esac
    ok=1
    for l in "$@"; do case "$line" in *[{,]"${l%%=*}=\"${l#*=}\""[,}]*) ;; *) ok=0 ;; esac; done
    [ "$ok" = 1 ] && { echo "$line"; return 0; }
  done <<< "$body"
  return 1
}
hpc_job_of() {  # the hpc_job labels of DCGM_FI_DEV_GPU_UTIL on GPU $1: "none", or "no series"
  local line
  line=$(metric_line DCGM_FI_DEV_GPU_UTIL gpu="$1") || { echo "no series"; return 0; }
  grep -o 'hpc_job="[^"]*"' <<< "$line" || echo none
}
plain_job_id() { plain_job=$(squeue -h -n plain -o %i 2>/dev/null | head -n1); [ -n "$plain_job" ]; }
srun --job-name=plain sleep 120 > "$T/log/srun-plain.out" 2>&1 < /dev/null &
pids+=($!)
if wait_for "the plain job" plain_job_id && wait_for "the plain job $plain_job's task" plain_task; then
  plain_pid=$(plain_task)
  plain_user=$(ps -o user= -p "$plain_pid" | tr -d ' ')
  echo "  job $plain_job: task $plain_pid (sleep), user $plain_user"
  # Nothing but its environ can tell its job: no Slurm cgroup holds it.
  check "task in no Slurm cgroup" "no" "$(grep -qE 'slurm|job_[0-9]' "/proc/$plain_pid/cgroup" && echo yes || echo no)"
  printf '# the plain job %s task, on stand-in GPU 0\ngpu=0 pid=%s mem=1073741824 sm=5\n' "$plain_job" "$plain_pid" \
    > "$T/processes.txt"
  # The exporter's own stand-in machine: fleet_4 answers utilisation (dcgm's GPU_UTIL).
  FAKE_NVML_SCENARIO=$tests/fake_nvml/scenarios/fleet_4.txt FAKE_CUDA_SCENARIO=$tests/fake_nvml/scenarios/fleet_4.txt \
    FAKE_NVML_PROCESSES=$T/processes.txt HOME=$T \
    "$gpuenv" export --listen 127.0.0.1:0 --interval 0.25 --pod-resources-socket "" \
    > "$T/log/export.out" 2> "$T/log/export.log" < /dev/null &
  pids+=($!)
  wait_for "gpuenv export" grep -q 'listening on http://127.0.0.1:[0-9]*/' "$T/log/export.log"
  export_port=$(grep -o 'http://127.0.0.1:[0-9]*/' "$T/log/export.log" | head -n1 | grep -o '[0-9]*/$' | tr -d /)
  if wait_for "gpuenv_job_gpu_seconds_total of job $plain_job" \
       metric_line gpuenv_job_gpu_seconds_total job="$plain_job" scheduler=slurm user="$plain_user" gpu=0; then
    check "job series" "gpu=0 job=$plain_job scheduler=slurm user=$plain_user" \
      "$(metric_line gpuenv_job_gpu_seconds_total job="$plain_job" |
         grep -o '[{,]\(job\|scheduler\|user\|gpu\)="[^"]*"' | tr -d '"{,' | sort | paste -sd' ')"
    check "processes" "1" "$(metric_line gpuenv_job_processes job="$plain_job" | awk '{print $NF}')"
  fi
  check "hpc_job on GPU 0" "hpc_job=\"$plain_job\"" "$(hpc_job_of 0)"
  check "hpc_job on GPU 1 (no job there)" "none" "$(hpc_job_of 1)"
else
  echo "  FAIL the plain job did not start: $(tail -n 5 "$T/log/srun-plain.out" 2>/dev/null)"; failed=1
fi
echo "the exporter's case took $(( $(date +%s) - start )) s"

if [ "$failed" -ne 0 ]; then echo "FAIL: tests/slurm/run.sh"; exit 1; fi
echo "PASS: tests/slurm/run.sh (Slurm $(srun --version | cut -d' ' -f2): 3 srun cases x 2 tasks, 1 batch script, gpuenv export on a plain job)"

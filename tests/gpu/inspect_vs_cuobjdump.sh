#!/bin/bash
# On a machine with the CUDA toolkit (cuobjdump) and PyTorch: compares
# `gpuenv inspect --json` with `cuobjdump --list-elf --list-ptx` on
# torch/lib/libtorch_cuda.so and the CUDA libraries found (pip's nvidia/*/lib
# and /usr/local/cuda/lib64), or on the files given as arguments. Prints a
# table of per-architecture counts and wall times (median of 3 warm runs of
# each tool) and exits non-zero when a count differs or inspect takes more
# than 10 % of cuobjdump's time.
#   tests/gpu/inspect_vs_cuobjdump.sh [FILE...]
#   env: GPUENV_BIN (default build/gpuenv), CUOBJDUMP, PYTHON (default python3)
set -u
cd "$(dirname "$0")/../.."
export GPUENV_BIN=${GPUENV_BIN:-build/gpuenv}
export CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}
PY=${PYTHON:-python3}
echo "== inspect vs cuobjdump on $(hostname), $(date -u +%FT%TZ)"
"$CUOBJDUMP" --version | tail -1
"$GPUENV_BIN" --version
exec "$PY" - "$@" <<'PYEOF'
import collections, glob, importlib.util, json, os, re, statistics, subprocess, sys, time

BIN, CUOBJDUMP = os.environ["GPUENV_BIN"], os.environ["CUOBJDUMP"]

def torch_lib():
    spec = importlib.util.find_spec("torch")  # finds it without importing it
    if not spec or not spec.origin:
        return []
    path = os.path.join(os.path.dirname(spec.origin), "lib", "libtorch_cuda.so")
    return [path] if os.path.exists(path) else []

def cuda_libs():
    pats = ["libcublasLt.so*", "libcublas.so*", "libcudnn_engines_precompiled.so*", "libcufft.so*",
            "libcusparse.so*", "libnccl.so*", "libcusolver.so*", "libcurand.so*"]
    dirs = [os.path.join(p, "nvidia", "*", "lib") for p in sys.path if p.endswith("-packages")]
    dirs.append("/usr/local/cuda/lib64")
    found = {}
    for d in dirs:
        for pat in pats:
            for f in sorted(glob.glob(os.path.join(d, pat))):
                real = os.path.realpath(f)
                if os.path.isfile(real) and not real.endswith(".a"):
                    found.setdefault(real, f)
    return sorted(found.values())

def timed(cmd):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - t, p

def median_time(cmd, runs=3):
    timed(cmd)  # warm the page cache for both tools alike
    times, last = [], None
    for _ in range(runs):
        t, last = timed(cmd)
        times.append(t)
    return statistics.median(times), last

def ours(path):
    t, p = median_time([BIN, "inspect", "--json", "--machine", "tests/machines/none.json", path])
    try:
        f = json.loads(p.stdout)["files"][0]
    except ValueError:
        return t, None, f"exit {p.returncode}: {p.stderr.strip()}"
    if "error" in f:
        return t, None, f["error"]
    c = collections.Counter({k: v["count"] for k, v in f["cubins"].items()})
    c.update({k: v["count"] for k, v in f["ptx"].items()})
    return t, c, f["section"]

NAME = re.compile(r"^(ELF|PTX) file\s+\d+: .*\.(sm_\d+[af]?)\.(cubin|ptx)$")

def theirs(path):
    t, p = median_time([CUOBJDUMP, "--list-elf", "--list-ptx", path])
    c = collections.Counter()
    for line in p.stdout.splitlines():
        m = NAME.match(line.strip())
        if m:
            arch = m.group(2)
            c[arch if m.group(1) == "ELF" else "compute_" + arch[3:]] += 1
    return t, c

def fold_family(c):
    """cuobjdump 13.0 lists family-specific cubins (flag 0x200000, what nvcc
    -arch=sm_100f writes) under the base name; fold ours the same way."""
    out = collections.Counter()
    for k, v in c.items():
        out[k[:-1] if k.startswith("sm_") and k.endswith("f") else k] += v
    return out

def main(files):
    files = files or torch_lib() + cuda_libs()
    if not files:
        sys.exit("no libtorch_cuda.so or CUDA library found; pass files as arguments")
    head = f"{'file':44} {'MB':>6} {'entries':>8} {'cuobjdump':>9} {'same':>5} {'inspect ms':>10} {'cuobjdump ms':>12} {'ratio':>6}"
    print(head)
    print("-" * len(head))
    bad = False
    for path in files:
        t_ours, c_ours, info = ours(path)
        t_theirs, c_theirs = theirs(path)
        mb = os.path.getsize(path) / 1e6
        same = c_ours is not None and fold_family(c_ours) == c_theirs
        ratio = t_ours / t_theirs if t_theirs else 0
        n_ours = sum(c_ours.values()) if c_ours is not None else -1
        print(f"{os.path.basename(path)[:44]:44} {mb:6.0f} {n_ours:8} {sum(c_theirs.values()):9} "
              f"{'yes' if same else 'NO':>5} {t_ours * 1e3:10.1f} {t_theirs * 1e3:12.1f} {ratio:6.1%}")
        if c_ours is None:
            print(f"    inspect failed: {info}")
        elif not same:
            folded = fold_family(c_ours)
            for k in sorted(set(folded) | set(c_theirs)):
                if folded[k] != c_theirs[k]:
                    print(f"    {k}: inspect {folded[k]}, cuobjdump {c_theirs[k]}")
        elif c_ours:
            print(f"    {info}: " + ", ".join(f"{k}: {v}" for k, v in sorted(c_ours.items())))
        bad |= not same or (t_theirs > 0.5 and ratio > 0.10)
    lib = torch_lib()
    if lib:
        code = "import torch; print(torch.__version__, torch.cuda.get_arch_list())"
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        print("torch.cuda.get_arch_list():", (p.stdout or p.stderr).strip())
    sys.exit(1 if bad else 0)

main(sys.argv[1:])
PYEOF

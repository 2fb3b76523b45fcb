#!/usr/bin/env python3
"""The table "dcgm-exporter's default counters, by profile" in docs/metrics.md,
checked against what `gpuenv export` serves on the stand-in machines.

    dcgm_table.py GPUENV FAKE_DIR SCENARIOS_DIR METRICS_MD [--print]

Each profile's exporter runs on its stand-in (the stand-in NVML, and for
"A100 + DCGM" the stand-in libdcgm), and is scraped until it serves every
field the table says it does (each round adds what needs two readings) or
5 s pass; then the DCGM names it serves of dcgm-exporter's default counters
must be exactly the table's. --print writes the table as it is served.
"""
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

# dcgm-exporter 4.x's etc/default-counters.csv, its enabled rows (docs/metrics.md).
DEFAULT = [
    "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
    "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_DEC_UTIL",
    "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_RESERVED",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES",
]

# (column, scenario, with the stand-in DCGM)
PROFILES = [
    ("8× H200", "h200_8_busy", False),
    ("A100 in MIG mode", "a100_mig_busy", False),
    ("8× A100", "a100_nvlink_8", False),
    ("8× A100 + DCGM", "a100_nvlink_8", True),
    ("2× L4", "l4_2numa", False),
]

HEADING = "### dcgm-exporter's default counters, by profile"


def served(gpuenv, fake, scenarios, scenario, dcgm, want):
    env = dict(os.environ, GPUENV_NVML_LIBRARY=fake + "/libnvidia-ml.so.1",
               GPUENV_CUDA_LIBRARY=fake + "/libcuda.so.1",
               GPUENV_DCGM_LIBRARY=(fake + "/libdcgm.so.4") if dcgm else "/nonexistent/libdcgm.so.4",
               FAKE_NVML_SCENARIO=os.path.join(scenarios, scenario + ".txt"),
               FAKE_CUDA_SCENARIO=os.path.join(scenarios, scenario + ".txt"))
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([gpuenv, "export", "--listen", "127.0.0.1:0", "--interval", "0.2"], env=env,
                             stdout=subprocess.DEVNULL, stderr=err)
        try:
            port, deadline = None, time.monotonic() + 20
            while port is None and time.monotonic() < deadline and p.poll() is None:
                err.seek(0)
                m = re.search(rb"listening on http://127\.0\.0\.1:(\d+)", err.read())
                port = int(m.group(1)) if m else time.sleep(0.05)
            if port is None:
                err.seek(0)
                sys.exit("%s: the exporter did not start: %s" % (scenario, err.read().decode(errors="replace")))
            got, deadline = set(), time.monotonic() + 5
            while True:
                body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read().decode()
                got = {n for n in DEFAULT if re.search(r"^%s\{" % n, body, re.M)}
                if (want is not None and got >= want) or time.monotonic() > deadline:
                    return got
                time.sleep(0.1)
        finally:
            p.terminate()
            p.wait()


def table_in(md):
    text = open(md).read()
    at = text.find(HEADING)
    if at < 0:
        sys.exit("%s has no %r" % (md, HEADING))
    rows = {}
    header = None
    for line in text[at:].splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells[1:]
        elif not set(cells[0]) <= set("-: "):
            rows[cells[0].strip("`")] = cells[1:]
    return header, rows


def main():
    gpuenv, fake, scenarios, md = sys.argv[1:5]
    printing = "--print" in sys.argv
    header, rows = (None, {}) if printing else table_in(md)
    if not printing and header != [p[0] for p in PROFILES]:
        sys.exit("the table's columns %s, want %s" % (header, [p[0] for p in PROFILES]))
    if not printing and set(rows) != set(DEFAULT):
        sys.exit("the table's rows differ from the default counters: %s" % sorted(set(rows) ^ set(DEFAULT)))
    columns = []
    for i, (name, scenario, dcgm) in enumerate(PROFILES):
        want = None if printing else {f for f in DEFAULT if rows[f][i] == "✓"}
        columns.append(served(gpuenv, fake, scenarios, scenario, dcgm, want))
    if printing:
        print("| field | " + " | ".join(p[0] for p in PROFILES) + " |")
        print("|---" * (len(PROFILES) + 1) + "|")
        for f in DEFAULT:
            print("| `%s` | " % f + " | ".join("✓" if f in c else "—" for c in columns) + " |")
        return
    bad = []
    for i, (name, _, _) in enumerate(PROFILES):
        for f in DEFAULT:
            says, is_ = rows[f][i] == "✓", f in columns[i]
            if says != is_:
                bad.append("%s on %s: the table says %s, the exporter %s" %
                           (f, name, "served" if says else "not served", "serves it" if is_ else "does not"))
    if bad:
        sys.exit("docs/metrics.md's table is not what gpuenv export serves:\n  " + "\n  ".join(bad))
    print("the table holds: %d fields on %d profiles" % (len(DEFAULT), len(PROFILES)))


if __name__ == "__main__":
    main()

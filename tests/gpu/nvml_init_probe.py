"""How long NVML's init variants take, in-process, each in a fresh process:
nvmlInit_v2, nvmlInitWithFlags(0) and nvmlInitWithFlags(NVML_INIT_FLAG_NO_ATTACH),
then the handles and two queries. Usage: python3 tests/gpu/nvml_init_probe.py"""
import ctypes, json, subprocess, sys, time
if len(sys.argv) > 1:
    v = sys.argv[1]
    t = time.perf_counter
    r = {}
    a = t(); lib = ctypes.CDLL("libnvidia-ml.so.1"); r["dlopen"] = t() - a
    a = t()
    rc = lib.nvmlInit_v2() if v == "v2" else lib.nvmlInitWithFlags(ctypes.c_uint(int(v)))
    r["init"] = t() - a; r["init_rc"] = rc
    n = ctypes.c_uint()
    a = t(); rc = lib.nvmlDeviceGetCount_v2(ctypes.byref(n)); r["count"] = t() - a; r["count_rc"] = rc; r["n"] = n.value
    hs = []
    for i in range(n.value):
        h = ctypes.c_void_p()
        a = t(); rc = lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)); r[f"handle{i}"] = t() - a; r[f"handle{i}_rc"] = rc
        hs.append(h)
    for i, h in enumerate(hs):
        buf = ctypes.create_string_buffer(96)
        a = t(); rc = lib.nvmlDeviceGetName(h, buf, 96); r[f"name{i}"] = t() - a; r[f"name{i}_rc"] = rc; r[f"name{i}_v"] = buf.value.decode()
        mem = (ctypes.c_ulonglong * 3)()
        a = t(); rc = lib.nvmlDeviceGetMemoryInfo(h, mem); r[f"mem{i}"] = t() - a; r[f"mem{i}_rc"] = rc
    print(json.dumps({k: (round(x * 1000, 3) if isinstance(x, float) else x) for k, x in r.items()}))
    sys.exit(0)
for v in ["v2", "0", "2", "v2", "0", "2", "v2", "0", "2"]:
    out = subprocess.run([sys.executable, __file__, v], capture_output=True, text=True)
    print(v, out.stdout.strip(), out.stderr.strip()[-300:])

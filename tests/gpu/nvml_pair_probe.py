"""Times NVML's pair queries on a 2-GPU machine: which of P2P status and topology pays
NVML's one-time topology build (docs/performance.md, detect on 2x H200)."""
import ctypes, time
n = ctypes.CDLL("libnvidia-ml.so.1")
t = time.perf_counter(); assert n.nvmlInit_v2() == 0; print("init %.2f ms" % ((time.perf_counter()-t)*1e3))
h = [ctypes.c_void_p(), ctypes.c_void_p()]
for i in range(2):
    t = time.perf_counter(); n.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h[i])); print("handle %d %.2f ms" % (i, (time.perf_counter()-t)*1e3))
s = ctypes.c_int()
for cap, name in ((0, "read"), (6, "nvlink")):
    t = time.perf_counter(); rc = n.nvmlDeviceGetP2PStatus(h[0], h[1], cap, ctypes.byref(s)); print("p2p %s rc=%d status=%d %.2f ms" % (name, rc, s.value, (time.perf_counter()-t)*1e3))
lvl = ctypes.c_int()
t = time.perf_counter(); rc = n.nvmlDeviceGetTopologyCommonAncestor(h[0], h[1], ctypes.byref(lvl)); print("topology rc=%d level=%d %.2f ms" % (rc, lvl.value, (time.perf_counter()-t)*1e3))

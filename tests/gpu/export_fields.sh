#!/bin/bash
# On a real GPU machine: the dcgm-exporter default counters issue 39 added
# (ENC/DEC utilisation, FB_RESERVED, PCIe TX/RX bytes, Xid's err_code and
# err_msg) and the NVLink error counters, served by `gpuenv export -f FILE`
# against nvidia-smi, idle and while torch copies host->device on GPU 0.
#   GPUENV=./build/gpuenv tests/gpu/export_fields.sh
# Prints one line per claim (PASS/FAIL) and exits 1 on a FAIL.
set -u
GPUENV=${GPUENV:-./build/gpuenv}
OUT=${OUT:-/tmp/gpuenv-gpu}
mkdir -p "$OUT"
fail=0
claim() { if [ "$2" = 1 ]; then echo "PASS  $1"; else echo "FAIL  $1"; fail=1; fi; }
cat >"$OUT/counters.csv" <<'CSV'
DCGM_FI_DEV_ENC_UTIL, gauge, Encoder utilization (in %).
DCGM_FI_DEV_DEC_UTIL, gauge, Decoder utilization (in %).
DCGM_FI_DEV_FB_RESERVED, gauge, Framebuffer memory reserved (in MiB).
DCGM_FI_DEV_FB_TOTAL, gauge, Framebuffer memory total (in MiB).
DCGM_FI_PROF_PCIE_TX_BYTES, gauge, The rate of data transmitted over the PCIe bus.
DCGM_FI_PROF_PCIE_RX_BYTES, gauge, The rate of data received over the PCIe bus.
DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error encountered.
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, counter, NVLink flow-control CRC errors.
CSV
"$GPUENV" export --listen 127.0.0.1:0 --interval 1 -f "$OUT/counters.csv" 2>"$OUT/fields.err" &
pid=$!
trap 'kill $pid ${load:-} 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$OUT/fields.err" && break; sleep 0.1; done
port=$(grep -o 'http://127.0.0.1:[0-9]*' "$OUT/fields.err" | head -n1 | cut -d: -f3)
[ -n "$port" ] || { cat "$OUT/fields.err"; echo "FAIL  the exporter started"; exit 1; }
head -n1 "$OUT/fields.err"
val() { grep "^$1{" "$OUT/m.txt" | grep "gpu=\"0\"" | head -n1 | awk '{print $NF}'; }
sleep 3
curl -sS "http://127.0.0.1:$port/metrics" >"$OUT/m.txt"
smi=$(nvidia-smi -i 0 --query-gpu=memory.reserved,utilization.encoder,utilization.decoder --format=csv,noheader,nounits | tr -d ' ')
IFS=, read -r res enc dec <<<"$smi"
echo "nvidia-smi: reserved $res MiB, enc $enc %, dec $dec %; gpuenv: $(val DCGM_FI_DEV_FB_RESERVED) MiB, $(val DCGM_FI_DEV_ENC_UTIL) %, $(val DCGM_FI_DEV_DEC_UTIL) %"
claim "FB_RESERVED equals nvidia-smi's memory.reserved" "$([ "$(val DCGM_FI_DEV_FB_RESERVED)" = "$res" ] && echo 1)"
claim "ENC/DEC equal nvidia-smi's" "$([ "$(val DCGM_FI_DEV_ENC_UTIL)" = "$enc" ] && [ "$(val DCGM_FI_DEV_DEC_UTIL)" = "$dec" ] && echo 1)"
claim "Xid carries err_code and err_msg" "$(grep -q '^DCGM_FI_DEV_XID_ERRORS{.*err_code="0".*err_msg="' "$OUT/m.txt" && echo 1)"
grep -q '^DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{' "$OUT/m.txt"; nvl=$?
echo "NVLink CRC flit series: $([ $nvl = 0 ] && grep -m1 '^DCGM_FI_DEV_NVLINK_CRC_FLIT' "$OUT/m.txt" | awk '{print $NF}' || echo absent) (links: $(nvidia-smi nvlink -s -i 0 2>/dev/null | grep -c 'GB/s'))"
idle_rx=$(val DCGM_FI_PROF_PCIE_RX_BYTES)
rm -f "$OUT/copying"
python3 - "$OUT/copying" <<'PYEOF' >"$OUT/copies.txt" &
import sys, time, torch
x = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
y = torch.empty_like(x, device="cuda")
y.copy_(x)
torch.cuda.synchronize()
open(sys.argv[1], "w").close()  # copying from now on
t = time.time()
n = 0
while time.time() - t < 8:
    y.copy_(x, non_blocking=True)
    torch.cuda.synchronize()
    n += 1
print("torch: %.0f B/s host->device" % (n * x.numel() / (time.time() - t)), flush=True)
PYEOF
load=$!
for _ in $(seq 300); do [ -e "$OUT/copying" ] && break; sleep 0.1; done
sleep 2.5  # two exporter rounds (1 s) inside the copies
curl -sS "http://127.0.0.1:$port/metrics" >"$OUT/m.txt"
smi_rx=$(nvidia-smi dmon -i 0 -s t -c 1 | awk '!/^#/ {print $2}')
rx=$(val DCGM_FI_PROF_PCIE_RX_BYTES)
echo "PCIe RX: idle $idle_rx B/s; under host->device copies gpuenv $rx B/s, nvidia-smi dmon ${smi_rx} MB/s"
claim "PCIe RX under copies is over 5 GB/s" "$(python3 -c "print(1 if float('${rx:-0}') > 5e9 else 0)")"
wait $load
echo "(nvidia-smi dmon's rxpci is nvmlDeviceGetPcieThroughput, shown for comparison; the oracle is the copies' own rate)"
torch_rate=$(awk '{print $2}' "$OUT/copies.txt")
echo "torch's own copies: $torch_rate B/s"
claim "PCIe RX within 15 % of the copies' own rate" "$(python3 -c "
r=float('${rx:-0}'); t=float('${torch_rate:-0}')
print(1 if t > 0 and abs(r-t) <= 0.15*t else 0)")"
echo "DCGM: $(ls /usr/lib/x86_64-linux-gnu/libdcgm.so* 2>/dev/null | head -n1 || true)"
exit $fail

// measured: what `gpuenv bench` measured on this machine steers the plan.
// A GPU far below its spec peak -> a warning naming the likely causes; a
// case that failed -> a warning. P2P measured broken, or slower than going
// through host memory, is told to the nccl rule (measured_p2p_problems),
// which owns NCCL_P2P_DISABLE. The figures come from Machine::measurements
// (the store, read while sensing). docs/bench.md, docs/rules/measured.md
#include <algorithm>
#include <charconv>
#include <cstdio>

#include "decide/rules/rule_measured.h"
#include "decide/rules/rules.h"
#include "decide/visible.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

// Percent of the spec peak under which a figure is "far below". A healthy
// H200 at its 700 W cap ran bf16 GEMMs at 69-71 % of the datasheet rate
// (torch.matmul and gpuenv bench alike, docs/performance.md), copies at
// 89 % and pinned PCIe copies at 88 %.
constexpr double kComputeFarBelow = 60.0;
constexpr double kBandwidthFarBelow = 70.0;

std::string fixed(double v, int digits = 1) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string date_of(const Measurement& m) { return std::string(utf8_prefix(m.measured_at, 10)); }

const Gpu* visible_by_uuid(const std::vector<const Gpu*>& gpus, const std::string& uuid) {
  for (const Gpu* g : gpus)
    if (g->uuid && *g->uuid == uuid) return g;
  return nullptr;
}

const Measurement* find(const Machine& m, const std::string& key, const std::string& gpu,
                        const std::optional<std::string>& peer = std::nullopt) {
  for (const auto& x : m.measurements)
    if (x.key == key && x.gpu_uuid == gpu && x.peer_uuid == peer) return &x;
  return nullptr;
}

std::string pair_name(const Gpu& a, const Gpu& b) {
  return "GPU " + std::to_string(a.index) + "->" + std::to_string(b.index);
}

// Why P2P between a and b should not be used, or "".
std::string p2p_finding(const Machine& m, const Measurement& p2p, const Gpu& a, const Gpu& b) {
  if (!p2p.ok()) return pair_name(a, b) + " peer copy failed (" + p2p.detail + ", " + date_of(p2p) + ")";
  const Measurement* host = find(m, "p2p_via_host", p2p.gpu_uuid, p2p.peer_uuid);
  if (!p2p.value || !host || !host->ok() || !host->value || *p2p.value >= *host->value) return "";
  return pair_name(a, b) + " " + fixed(*p2p.value) + " GB/s peer to peer against " + fixed(*host->value) +
         " GB/s through host memory (" + date_of(p2p) + ")";
}


// "gemm_bf16_8192" -> 8192; 0 for a key without a size (snapshots are outside input).
int gemm_size(const std::string& key) {
  int n = 0;
  const char* first = key.data() + key.rfind('_') + 1;
  std::from_chars(first, key.data() + key.size(), n);
  return n;
}

// The GEMM figure that says most about the GPU: bf16 (else fp16, tf32,
// fp32) at the largest size measured.
const Measurement* headline_gemm(const Machine& m, const std::string& uuid) {
  for (const char* dtype : {"gemm_bf16_", "gemm_fp16_", "gemm_tf32_", "gemm_fp32_"}) {
    const Measurement* best = nullptr;
    for (const auto& x : m.measurements) {
      if (x.gpu_uuid != uuid || x.key.rfind(dtype, 0) != 0 || !x.percent_of_peak()) continue;
      if (!best || gemm_size(x.key) > gemm_size(best->key)) best = &x;
    }
    if (best) return best;
  }
  return nullptr;
}

const Measurement* best_of(const Machine& m, const std::string& uuid, std::initializer_list<const char*> keys) {
  const Measurement* best = nullptr;
  for (const char* k : keys)
    if (const Measurement* x = find(m, k, uuid); x && x->percent_of_peak())
      if (!best || *x->value > *best->value) best = x;
  return best;
}

std::string compute_causes(const Gpu& g) {
  std::string c = "SM clocks held low or throttled";
  if (g.max_sm_clock_mhz) c += " (max " + std::to_string(*g.max_sm_clock_mhz) + " MHz)";
  c += ", a power cap";
  if (g.power_limit_mw) c += " (limit " + std::to_string(*g.power_limit_mw / 1000) + " W)";
  return c + ", temperature (thermal slowdown), or another process on the GPU";
}

std::string memory_causes(const Gpu& g) {
  std::string c = "memory clock held low";
  if (g.max_memory_clock_mhz) c += " (max " + std::to_string(*g.max_memory_clock_mhz) + " MHz)";
  return c + ", temperature, a power cap, or another process on the GPU";
}

std::string link_causes(const Gpu& g) {
  const PcieLink& l = g.pcie;
  std::string c;
  if (l.width_current && l.width_max && *l.width_current < *l.width_max)
    c = "the PCIe link runs at x" + std::to_string(*l.width_current) + " of x" + std::to_string(*l.width_max) +
        " (reseat the card or check the slot), ";
  return c + "a narrower or older PCIe slot, a PCIe switch shared with other devices, or the IOMMU";
}

std::string below(const Gpu& g, const Measurement& x, const std::string& what, const std::string& causes) {
  return "GPU " + std::to_string(g.index) + " (" + g.name.value_or("?") + "): " + what + " measured " +
         fixed(*x.value) + " " + x.unit + ", " + fixed(*x.percent_of_peak(), 0) + " % of its " + fixed(*x.peak) + " " +
         x.unit + " peak (gpuenv bench " + x.key + ", " + date_of(x) + "); likely causes: " + causes +
         ". See `nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE`";
}

void far_below_peak(const Machine& m, const Gpu& g, Decision* d) {
  const std::string& uuid = *g.uuid;
  auto warn = [&](const Measurement* x, double limit, const std::string& what, const std::string& causes) {
    if (x && *x->percent_of_peak() < limit) d->notes.push_back({Severity::kWarning, "", below(g, *x, what, causes)});
  };
  warn(headline_gemm(m, uuid), kComputeFarBelow, "GEMM throughput", compute_causes(g));
  warn(best_of(m, uuid, {"memcpy_d2d", "copy_kernel"}), kBandwidthFarBelow, "device memory bandwidth",
       memory_causes(g));
  warn(best_of(m, uuid, {"h2d_pinned"}), kBandwidthFarBelow, "host to device bandwidth", link_causes(g));
  warn(best_of(m, uuid, {"d2h_pinned"}), kBandwidthFarBelow, "device to host bandwidth", link_causes(g));
}

void wrong_results(const Machine& m, const Gpu& g, Decision* d) {
  for (const auto& x : m.measurements) {
    if (x.ok() || x.gpu_uuid != *g.uuid || x.key.rfind("p2p", 0) == 0) continue;
    d->notes.push_back({Severity::kWarning, "",
                        "GPU " + std::to_string(g.index) + ": " + x.key + " failed when last measured (" + x.detail +
                            ", " + date_of(x) + "); run `gpuenv check --long`"});
  }
}

}  // namespace

std::vector<std::string> measured_p2p_problems(const Machine& m,
                                               const std::vector<const Gpu*>& gpus) {
  std::vector<std::string> found;
  for (const auto& x : m.measurements) {
    if (x.key != "p2p" || !x.peer_uuid) continue;
    const Gpu* a = visible_by_uuid(gpus, x.gpu_uuid);
    const Gpu* b = visible_by_uuid(gpus, *x.peer_uuid);
    if (!a || !b) continue;
    if (std::string f = p2p_finding(m, x, *a, *b); !f.empty()) found.push_back(f);
  }
  return found;
}

std::map<std::string, double> measured_gemm_tflops(const Machine& m, const std::string& uuid) {
  std::map<std::string, double> out;
  for (const char* dtype : {"fp32", "tf32", "bf16"}) {
    const Measurement* best = nullptr;
    std::string prefix = std::string("gemm_") + dtype + "_";
    for (const auto& x : m.measurements)
      if (x.gpu_uuid == uuid && x.key.rfind(prefix, 0) == 0 && x.ok() && x.value && x.unit == "TFLOP/s" &&
          (!best || gemm_size(x.key) > gemm_size(best->key)))
        best = &x;
    if (best) out[dtype] = *best->value;
  }
  return out;
}

Decision rule_measured(const Machine& m, const Options& o) {
  Decision d;
  if (m.measurements.empty()) return d;
  std::vector<const Gpu*> gpus = visible_gpus(visible_devices(m, o));
  for (const Gpu* g : gpus) {
    if (!g->uuid) continue;
    far_below_peak(m, *g, &d);
    wrong_results(m, *g, &d);
  }
  return d;
}

}  // namespace gpuenv

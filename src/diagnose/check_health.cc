// Health now, per GPU: persistence and compute modes, memory held by other
// processes, memory errors, clock slowdowns and the PCIe link.
#include <set>

#include "decide/health.h"
#include "decide/visible.h"
#include "diagnose/describe.h"
#include "diagnose/doctor.h"
#include "model/gpu_label.h"
#include "model/hardware/clock_events.h"

namespace gpuenv {
namespace {



}  // namespace

std::vector<Finding> check_persistence(const Machine& m, const Options&) {
  std::vector<std::string> off;
  bool known = false;
  for (const auto& g : m.gpus)
    if (g.persistence_mode) {
      known = true;
      if (!*g.persistence_mode) off.push_back(std::to_string(g.index));
    }
  if (!known) return {};
  if (off.empty()) return {ok("persistence mode is on")};
  return {warning("persistence mode is off on GPU " + diag::join(off) +
                      ": the driver tears the GPUs down when the last process exits, so each "
                      "start pays their initialisation again",
                  "`sudo nvidia-smi -pm 1`, or enable the nvidia-persistenced service")};
}

// Prohibited: cuCtxCreate fails on the GPU ("all CUDA-capable devices are
// busy or unavailable"), so torch cannot use it. Exclusive modes are often a
// cluster's deliberate choice: said, not warned about.
std::vector<Finding> check_compute_mode(const Machine& m, const Options&) {
  std::vector<std::string> prohibited, exclusive;
  bool known = false;
  for (const auto& g : m.gpus) {
    if (!g.compute_mode || g.problem) continue;
    known = true;
    if (*g.compute_mode == "prohibited") prohibited.push_back(std::to_string(g.index));
    if (g.compute_mode->rfind("exclusive", 0) == 0) exclusive.push_back(std::to_string(g.index));
  }
  if (!known) return {};
  auto gpus_are = [](const std::vector<std::string>& idx) {
    bool one = idx.size() == 1;
    return (one ? "GPU " : "GPUs ") + diag::join(idx) + (one ? " is" : " are");
  };
  std::vector<Finding> out;
  if (!prohibited.empty()) {
    std::string fix;
    for (const auto& i : prohibited)
      fix += (fix.empty() ? "`" : "; `") + ("sudo nvidia-smi -i " + i + " -c DEFAULT`");
    out.push_back(error(gpus_are(prohibited) +
                            " in the Prohibited compute mode: no process can create a CUDA context "
                            "there (\"CUDA-capable device(s) is/are busy or unavailable\")",
                        fix + ", or leave it out of CUDA_VISIBLE_DEVICES"));
  }
  if (!exclusive.empty())
    out.push_back(ok(gpus_are(exclusive) +
                     " in an Exclusive compute mode: one CUDA process at a time, so one rank per "
                     "GPU; a second process there fails with \"busy or unavailable\""));
  if (out.empty()) out.push_back(ok("compute mode is Default"));
  return out;
}

// Memory other processes hold on a GPU this process would use: torch can
// allocate only the rest ("CUDA out of memory" at a batch size that fits).
// total - free also counts the driver's own reservation (0.4 % of an H200),
// so only a tenth of the GPU or more counts. A MIG GPU's memory belongs to
// its MIG devices, whose own use NVML's parent query doesn't give.
std::vector<Finding> check_memory_in_use(const Machine& m, const Options& o) {
  std::set<int> visible;
  for (const auto& d : visible_devices(m, o).devices)
    if (!d.mig) visible.insert(d.gpu->index);
  std::vector<Finding> out;
  bool known = false;
  for (const auto& g : m.gpus) {
    if (!visible.count(g.index) || !g.memory_total_bytes || !g.memory_free_bytes) continue;
    std::uint64_t total = *g.memory_total_bytes, free = *g.memory_free_bytes;
    if (total == 0 || free > total) continue;
    known = true;
    std::uint64_t used = total - free;
    if (used < total / 10) continue;
    out.push_back(warning(gpu_label(g) + " has " + bytes_text(used) + " of its " +
                              bytes_text(total) + " in use by other processes: torch can "
                              "allocate only the " + bytes_text(free) + " left",
                          "`nvidia-smi --query-compute-apps=pid,process_name,used_memory "
                          "--format=csv` lists them; stop them, or choose another GPU with "
                          "CUDA_VISIBLE_DEVICES"));
  }
  if (!known) return {};
  if (out.empty()) out.push_back(ok("no GPU has a tenth of its memory or more in use"));
  return out;
}

// Applies decide/health.h's findings to every GPU, as doctor's findings.
std::vector<Finding> health_findings(const Machine& m, std::initializer_list<HealthFn> fns) {
  std::vector<Finding> out;
  for (const auto& g : m.gpus)
    for (HealthFn fn : fns)
      if (auto h = fn(g)) {
        std::string seen = gpu_label(g) + " " + h->seen;
        out.push_back(h->severity == Severity::kError ? error(seen, h->fix) : warning(seen, h->fix));
      }
  return out;
}

std::vector<Finding> check_memory_errors(const Machine& m, const Options&) {
  bool known = false;
  for (const auto& g : m.gpus)
    known = known || g.health.ecc_uncorrected || g.health.row_remap_pending || g.retired_pages_pending;
  auto out = health_findings(m, {on_gpu<uncorrected_ecc>, on_gpu<row_remapping>, retired_pages});
  if (out.empty() && known)
    out.push_back(ok("no uncorrectable ECC errors, no pending row remapping or page retirement"));
  return out;
}

std::vector<Finding> check_clocks(const Machine& m, const Options&) {
  bool known = false;
  for (const auto& g : m.gpus) known = known || g.health.clock_events;
  auto out = health_findings(m, {on_gpu<clock_slowdown>});
  if (out.empty() && known) out.push_back(ok("no thermal, power-brake or hardware slowdown"));
  return out;
}

std::vector<Finding> check_pcie(const Machine& m, const Options&) {
  std::vector<Finding> out;
  bool known = false;
  for (const auto& g : m.gpus) {
    const PcieLink& p = g.pcie;
    if (p.width_current && p.width_max) {
      known = true;
      if (*p.width_current < *p.width_max) {
        out.push_back(warning(gpu_label(g) + "'s PCIe link runs at x" +
                                  std::to_string(*p.width_current) + " of x" +
                                  std::to_string(*p.width_max) +
                                  ": host-device copies get a fraction of the bandwidth",
                              "reseat the card or move it to a full-width slot; check the "
                              "slot's lane sharing in the BIOS"));
        continue;
      }
    }
    if (p.gen_current && p.gen_max && *p.gen_current < *p.gen_max) {
      known = true;
      // Links train down to save power when idle; only a busy GPU's matters.
      bool idle = !g.health.clock_events || (*g.health.clock_events & clock_event::kGpuIdle);
      if (!idle)
        out.push_back(warning(gpu_label(g) + "'s PCIe link runs at gen " +
                                  std::to_string(*p.gen_current) + " of gen " +
                                  std::to_string(*p.gen_max) + " while busy",
                              "check the slot and riser, and the BIOS's PCIe speed setting"));
    }
  }
  if (out.empty() && known)
    out.push_back(ok("PCIe links at full width (a lower generation while idle is normal)"));
  return out;
}

}  // namespace gpuenv

#include "decide/health.h"

#include "model/hardware/clock_events.h"

namespace gpuenv {
namespace {

constexpr std::uint64_t kHardwareSlowdown =
    clock_event::kHwSlowdown | clock_event::kHwThermalSlowdown | clock_event::kHwPowerBrakeSlowdown;

std::string reset_fix(int gpu) {
  return "stop the GPU's processes and reset it: `sudo nvidia-smi -r -i " + std::to_string(gpu) + "` (or reboot)";
}

HealthFinding finding(int gpu, const char* topic, Severity s, std::string seen, std::string fix) {
  return {gpu, topic, s, std::move(seen), std::move(fix)};
}

std::string slowdown_causes(std::uint64_t r) {
  std::string out;
  auto add = [&](const char* why) { out += (out.empty() ? "" : " and ") + std::string(why); };
  if (r & (clock_event::kSwThermalSlowdown | clock_event::kHwThermalSlowdown)) add("thermal slowdown");
  if (r & clock_event::kHwPowerBrakeSlowdown) add("power brake (the external power supply)");
  if ((r & clock_event::kHwSlowdown) &&
      !(r & (clock_event::kHwThermalSlowdown | clock_event::kHwPowerBrakeSlowdown)))
    add("hardware slowdown");
  return out;
}

}  // namespace

std::optional<HealthFinding> uncorrected_ecc(int gpu, const GpuHealth& h) {
  if (!h.ecc_uncorrected || *h.ecc_uncorrected == 0) return std::nullopt;
  return finding(gpu, "memory", Severity::kError,
                 "had " + std::to_string(*h.ecc_uncorrected) +
                     " uncorrectable ECC error(s) since the driver loaded: results on it may be wrong "
                     "and CUDA contexts on it are killed (Xid 48/94)",
                 reset_fix(gpu) + "; if it recurs, `nvidia-smi -q -d ECC,ROW_REMAPPER` for the RMA ticket");
}

std::optional<HealthFinding> row_remapping(int gpu, const GpuHealth& h) {
  if (h.row_remap_failure.value_or(false))
    return finding(gpu, "memory", Severity::kError,
                   "failed a memory row remapping: the GPU has no spare rows left",
                   "the GPU needs replacing (RMA); `nvidia-smi -q -d ROW_REMAPPER` shows the counts");
  if (h.row_remap_pending.value_or(false))
    return finding(gpu, "memory", Severity::kWarning,
                   "has a memory row remapping pending: it takes effect at the next GPU reset", reset_fix(gpu));
  return std::nullopt;
}

std::optional<HealthFinding> retired_pages(const Gpu& g) {
  if (!g.retired_pages_pending.value_or(false)) return std::nullopt;
  return finding(g.index, "memory", Severity::kWarning,
                 "has retired memory pages pending: they take effect at the next GPU reset", reset_fix(g.index));
}

std::optional<HealthFinding> clock_slowdown(int gpu, const GpuHealth& h) {
  if (!h.clock_events) return std::nullopt;
  std::uint64_t r = *h.clock_events;
  std::string why = slowdown_causes(r);
  if (why.empty()) return std::nullopt;
  std::string temp = h.temperature_c ? " at " + std::to_string(*h.temperature_c) + " C" : "";
  bool hardware = r & kHardwareSlowdown;
  return finding(gpu, "clocks", hardware ? Severity::kError : Severity::kWarning,
                 "is slowed by " + why + temp + ": kernels run below full clocks" +
                     (hardware ? " (the hardware protects itself: cooling, power delivery or a fault)" : ""),
                 "check cooling, airflow and power cabling; `nvidia-smi -q -d PERFORMANCE,TEMPERATURE` "
                 "shows the reasons live");
}

std::optional<HealthFinding> fabric(const Gpu& g) {
  if (!g.fabric_state || *g.fabric_state == "not_supported") return std::nullopt;
  std::string fix = "`sudo systemctl enable --now nvidia-fabricmanager` (its version must match the "
                    "driver's); `journalctl -u nvidia-fabricmanager` says why it stopped";
  if (*g.fabric_state != "completed")
    return finding(g.index, "fabric", Severity::kError,
                   "has not joined the NVLink fabric (" + *g.fabric_state +
                       "): CUDA fails with \"system not yet initialized\" (error 802) until the Fabric "
                       "Manager has set it up",
                   fix);
  if (g.fabric_status && *g.fabric_status != 0)
    return finding(g.index, "fabric", Severity::kError,
                   "failed its NVLink fabric registration (NVML status " + std::to_string(*g.fabric_status) + ")",
                   fix);
  return std::nullopt;
}

std::vector<HealthFinding> gpu_health(const Machine& m) {
  static constexpr HealthFn kFindings[] = {on_gpu<uncorrected_ecc>, on_gpu<row_remapping>, retired_pages,
                                           on_gpu<clock_slowdown>, fabric};
  std::vector<HealthFinding> out;
  for (const auto& g : m.gpus)
    for (HealthFn fn : kFindings)
      if (auto f = fn(g)) out.push_back(std::move(*f));
  return out;
}

bool libraries_absent(const Problem& p) {
  return p.code == "nvml_library_not_found" || p.code == "cuda_library_not_found";
}

bool driver_fails(const Machine& m) {
  for (const auto& p : m.nvidia.problems)
    if (!libraries_absent(p)) return true;
  for (const auto& g : m.gpus)
    if (g.problem) return true;
  return false;
}

bool gpus_unreadable(const Machine& m) { return m.gpus.empty() && driver_fails(m); }

bool driver_needs_reload(const Machine& m) {
  for (const auto& p : m.nvidia.problems)
    if (p.code == "nvml_version_mismatch") return true;  // sense/nvml/nvml_errors.cc's code for 18
  return false;
}

}  // namespace gpuenv

#include "sense/nvml/nvml_call.h"

#include <climits>

#include "sense/nvml/nvml_device.h"
#include "sense/nvml/nvml_errors.h"

namespace gpuenv {

std::string call_name(const char* fn, const std::string& subject) {
  return subject.empty() ? fn : std::string(fn) + "(" + subject + ")";
}

bool NvmlCaller::report(const char* fn) {
  if (nvml_error_means_absent(last_)) return false;
  Problem p = nvml_problem(call_name(fn, subject_), last_, nvml_error_text(nvml_, last_));
  if (gpu_ != nullptr && nvml_error_is_fatal_for_gpu(last_)) {
    gpu_->problem = std::move(p);
    stopped_ = true;
  } else if (problems_ != nullptr) {
    problems_->push_back(std::move(p));
  }
  return false;
}

std::optional<std::string> get_string(NvmlCaller& call, const Fn<nvml::DeviceGetStringFn>& fn,
                                      nvml::Device d) {
  static_assert(nvml::kDeviceNameBufferSize <= 96 && nvml::kUuidBufferSize <= 96);
  char buf[96] = {};
  if (!call(fn, d, buf, static_cast<unsigned>(sizeof buf))) return std::nullopt;
  return c_string(buf);
}

std::optional<std::uint32_t> get_uint(NvmlCaller& call, const Fn<nvml::DeviceGetUintFn>& fn,
                                      nvml::Device d) {
  unsigned value = 0;
  if (!call(fn, d, &value)) return std::nullopt;
  return value;
}

std::optional<int> get_int(NvmlCaller& call, const Fn<nvml::DeviceGetUintFn>& fn, nvml::Device d) {
  std::optional<std::uint32_t> v = get_uint(call, fn, d);
  if (!v || *v > INT_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

// _v3/_v2 fill NVML's bus id string; the unversioned one only a legacy
// 4-digit-domain one, so then the address is spelled from its numbers.
std::optional<std::string> pci_bus_id(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d) {
  nvml::PciInfo pci{};
  if (call(f.pci_info, d, &pci)) return c_string(pci.bus_id);
  if (f.pci_info.call != nullptr) return std::nullopt;
  nvml::PciInfoV1 v1{};
  if (call(f.pci_info_v1, d, &v1)) return format_pci_bus_id(v1.domain, v1.bus, v1.device);
  return std::nullopt;
}

// Falls back only when _v2 says "not supported": a rejected version word
// is a bug to see, not to hide.
std::optional<MemoryInfo> memory_info(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d) {
  nvml::MemoryV2 v2{};
  v2.version = nvml::kMemoryV2Version;
  if (call(f.memory_v2, d, &v2)) return MemoryInfo{v2.total, v2.free, v2.used, v2.reserved};
  if (f.memory_v2.call != nullptr && call.last() != nvml::kErrorNotSupported) return std::nullopt;
  nvml::Memory v1{};
  if (call(f.memory, d, &v1)) return MemoryInfo{v1.total, v1.free, v1.used, std::nullopt};
  return std::nullopt;
}

std::optional<std::vector<unsigned>> active_nvlink_list(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d) {
  std::optional<std::vector<unsigned>> active;
  for (unsigned link = 0; link < nvml::kNvlinkMaxLinks; ++link) {
    int state = nvml::kFeatureDisabled;
    if (!call(f.nvlink_state, d, link, &state)) continue;
    if (!active) active.emplace();
    if (state == nvml::kFeatureEnabled) active->push_back(link);
  }
  if (call.stopped()) return std::nullopt;
  return active;
}

MigSlots mig_slots(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d) {
  MigSlots out;
  unsigned current = 0, pending = 0, slots = 0;
  if (!call(f.mig_mode, d, &current, &pending)) return out;
  out.enabled = current == nvml::kDeviceMigEnable;
  if (!*out.enabled || !call(f.max_mig_devices, d, &slots)) return out;
  for (unsigned slot = 0; slot < slots; ++slot) {
    nvml::Device mig = nullptr;
    if (call(f.mig_handle, d, slot, &mig)) out.devices.push_back({slot, mig});
  }
  return out;
}

std::optional<int> active_nvlinks(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d) {
  std::optional<std::vector<unsigned>> links = active_nvlink_list(call, f, d);
  if (!links) return std::nullopt;
  return static_cast<int>(links->size());
}

}  // namespace gpuenv

// Calling NVML about one subject (a GPU, a MIG device, a pair, the system)
// and the small readers sense/nvml/nvml_device.cc (one-shot sensing),
// sense/nvml/nvml_reading.cc (a GPU's live state) and
// sense/nvml/nvml_sampler.cc (the exporter's rounds) share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "model/machine.h"
#include "sense/nvml/nvml_library.h"
#include "sense/trace.h"

namespace gpuenv {

/// "fn(subject)", or fn when the subject is empty.
std::string call_name(const char* fn, const std::string& subject);

/// Runs NVML calls about one subject: a call whose function is absent or
/// that answers "absent" returns false quietly; any other failure becomes a
/// Problem. After a fatal one (GPU lost) the GPU gets the Problem and later
/// calls are skipped.
class NvmlCaller {
 public:
  NvmlCaller(const Nvml& nvml, std::string subject, std::vector<Problem>* problems,
             Gpu* gpu = nullptr)
      : nvml_(nvml), subject_(std::move(subject)), problems_(problems), gpu_(gpu) {}
  /// A caller for a watcher, which reports nothing per call: failures are
  /// dropped, but for a lost GPU's Problem in *gpu when given.
  explicit NvmlCaller(const Nvml& nvml, Gpu* gpu = nullptr) : NvmlCaller(nvml, "", nullptr, gpu) {}

  template <typename F, typename... Args>
  bool operator()(const Fn<F>& fn, Args... args) {
    if (stopped_) return false;
    trace::Scope t(fn.name);
    last_ = fn.call != nullptr ? fn.call(args...) : nvml::kErrorFunctionNotFound;
    return last_ == nvml::kSuccess || report(fn.name);
  }

  /// The last call's return code (kErrorFunctionNotFound when absent).
  nvml::Return last() const { return last_; }

  /// True once the GPU stopped answering.
  bool stopped() const { return stopped_; }

 private:
  bool report(const char* fn);

  const Nvml& nvml_;
  std::string subject_;
  std::vector<Problem>* problems_;  // nullptr: a quiet caller
  Gpu* gpu_;
  bool stopped_ = false;
  nvml::Return last_ = nvml::kSuccess;
};

template <std::size_t N>
std::string c_string(const char (&buf)[N]) {
  return std::string(buf, strnlen(buf, N));
}

std::optional<std::string> get_string(NvmlCaller& call, const Fn<nvml::DeviceGetStringFn>& fn,
                                      nvml::Device d);
std::optional<std::uint32_t> get_uint(NvmlCaller& call, const Fn<nvml::DeviceGetUintFn>& fn,
                                      nvml::Device d);
/// get_uint's value when it fits an int.
std::optional<int> get_int(NvmlCaller& call, const Fn<nvml::DeviceGetUintFn>& fn, nvml::Device d);

/// NVML's spelling of the GPU's PCI address ("00000000:3B:00.0").
std::optional<std::string> pci_bus_id(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d);

struct MemoryInfo {
  std::uint64_t total, free, used;
  std::optional<std::uint64_t> reserved;  // what the driver keeps (_v2 only)
};

/// _v2 when the driver has it (its `used` leaves out what the driver
/// reserves), else the unversioned call.
std::optional<MemoryInfo> memory_info(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d);

/// A GPU's MIG devices: whether it is in MIG mode (unknown when NVML does
/// not say), and in that mode each device NVML gives a handle of, with its
/// slot (nvmlDeviceGetMigDeviceHandleByIndex's index).
struct MigSlots {
  std::optional<bool> enabled;
  struct Slot {
    unsigned slot;
    nvml::Device handle;
  };
  std::vector<Slot> devices;
};
MigSlots mig_slots(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d);

/// NVLink links up. Links that answer are counted; none answering (no
/// NVLink) is unknown, and so is a count cut short by the GPU getting lost.
std::optional<int> active_nvlinks(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d);

/// The NVLink links up, by number; nullopt as active_nvlinks.
std::optional<std::vector<unsigned>> active_nvlink_list(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d);

}  // namespace gpuenv

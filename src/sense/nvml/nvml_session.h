// One NVML session: the library loaded through the one symbol table
// (sense/nvml/nvml_library.h), nvmlInit on open and nvmlShutdown when the
// session ends, and the GPUs' handles by index or by UUID. Every failure is
// a Problem from the error table (sense/nvml/nvml_errors.h). `gpuenv
// export`'s sampler, `gpuenv check --long`'s watcher and `gpuenv run`'s job
// watcher each hold one; one-shot sensing (sense/nvidia.cc) leaves NVML
// initialised for the process's exit instead.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/machine.h"
#include "sense/nvml/nvml_library.h"

namespace gpuenv {

/// One GPU as NVML lists it, or one MIG device of a GPU in MIG mode.
struct NvmlGpu {
  unsigned index = 0;             // the GPU's NVML index (a MIG device's parent's)
  nvml::Device handle = nullptr;  // the GPU's, or the MIG device's own
  std::string uuid;               // "GPU-...", or the MIG device's "MIG-..."
  nvml::Device parent = nullptr;  // a MIG device's GPU; nullptr for a GPU
  std::optional<unsigned> gpu_instance_id;  // a MIG device's (nvmlGpmMigSampleGet asks for it)
  /// The whole GPU: itself, or a MIG device's parent (power, clocks, PCIe).
  nvml::Device whole() const { return parent ? parent : handle; }
};

class NvmlSession {
 public:
  NvmlSession() = default;
  ~NvmlSession() { close(); }
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

  /// Loads `library` and initialises NVML. False with the Problem in *err
  /// (nvml_library_not_found, nvml_symbol_missing, or nvmlInit's code).
  bool open(const std::string& library, Problem* err);
  /// nvmlShutdown, when open() initialised NVML. What holds handles or
  /// GPM samples of this session must be done with them first.
  void close();

  bool is_open() const { return initialised_; }
  const Nvml& nvml() const { return nvml_; }

  /// nvmlDeviceGetCount.
  bool count(unsigned* n, Problem* err) const;
  /// nvmlDeviceGetHandleByIndex.
  bool handle(unsigned index, nvml::Device* d, Problem* err) const;
  /// Every GPU whose handle and UUID NVML gives, in NVML order, and with
  /// `migs` each one's MIG devices after it (those NVML gives a handle and
  /// UUID of). False only when NVML cannot count the GPUs or lacks
  /// nvmlDeviceGetUUID.
  bool gpus(std::vector<NvmlGpu>* out, Problem* err, bool migs = false) const;
  /// The GPUs with these UUIDs, in their order, from one listing; a UUID
  /// NVML does not list is nvml_gpu_not_found.
  bool find(const std::vector<std::string>& uuids, std::vector<NvmlGpu>* out, Problem* err) const;
  /// False with nvml_gpu_not_found for the first UUID of `uuids` that
  /// `listed` (gpus()'s answer) lacks.
  static bool all_listed(const std::vector<NvmlGpu>& listed, const std::vector<std::string>& uuids, Problem* err);

 private:
  Problem failed(const char* call, const std::string& subject, nvml::Return rc) const;

  Nvml nvml_;
  std::string library_;
  bool initialised_ = false;
};

}  // namespace gpuenv

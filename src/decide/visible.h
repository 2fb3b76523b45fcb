// Which devices a CUDA process will see, from CUDA_VISIBLE_DEVICES as the
// CUDA driver interprets it, computed by gpuenv itself (no cuInit).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv {

/// One device CUDA will enumerate: a whole GPU, or one MIG device of it.
struct VisibleDevice {
  const Gpu* gpu = nullptr;
  const MigDevice* mig = nullptr;  // set when the device is a MIG instance
  ComputeCapability cc() const;    // {0,0} when unknown
  bool cc_known() const { return gpu && gpu->compute_capability.has_value(); }
};

struct Visibility {
  std::vector<VisibleDevice> devices;
  bool restricted = false;  // CUDA_VISIBLE_DEVICES was set
  // Set when the variable could not be fully understood; the devices list
  // then holds what CUDA would still enumerate (everything before the bad
  // entry, as CUDA stops at the first invalid one).
  std::optional<std::string> problem;
};

/// How many of the visible devices one CUDA process enumerates: every whole
/// GPU, and at most one MIG device (CUDA uses one MIG device per process).
int enumerated_devices(const Visibility& v);

/// Whether any visible device is a MIG device.
bool any_mig(const Visibility& v);

/// Devices visible under `cuda_visible_devices` (nullptr: unset).
/// Entries are CUDA ordinals (NVML order, as gpuenv sets CUDA_DEVICE_ORDER
/// to PCI_BUS_ID), or GPU-/MIG- UUIDs and unique prefixes of them.
Visibility visible_devices(const Machine& m, const std::string* cuda_visible_devices);

/// Shorthand: visibility under the plan's environment.
Visibility visible_devices(const Machine& m, const Options& o);

/// The GPUs (not MIG devices) behind the visible devices, deduplicated.
std::vector<const Gpu*> visible_gpus(const Visibility& v);

}  // namespace gpuenv

// GPU health, judged once: doctor's memory_errors, clocks and fabric checks
// and `gpuenv check` report these same findings. Pure over a bare GpuHealth
// (model/hardware/gpu_health.h: the ECC counts, row remapping, clock events and
// temperature), as sensed (SenseOptions::with_health) or as `check --long`
// watched it, and over what only a one-shot look reads beside it in a Gpu
// (retired pages, the fabric).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/hardware/gpu_health.h"
#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv {

struct HealthFinding {
  int gpu = 0;                           // NVML index
  std::string topic;                     // "memory", "clocks", "fabric"
  Severity severity = Severity::kError;  // kWarning or kError
  std::string seen;                      // follows the GPU's name: "had 2 uncorrectable ..."
  std::string fix;
  friend bool operator==(const HealthFinding&, const HealthFinding&) = default;
};

/// A verdict over a GpuHealth alone: the sensed Gpu's, or one `check --long`
/// built from what it watched. `gpu` is the NVML index the finding names.
using GpuHealthFn = std::optional<HealthFinding> (*)(int gpu, const GpuHealth& h);
/// A verdict over a whole sensed Gpu (doctor's tables, gpu_health).
using HealthFn = std::optional<HealthFinding> (*)(const Gpu&);

/// Uncorrectable ECC errors since the driver loaded: error.
std::optional<HealthFinding> uncorrected_ecc(int gpu, const GpuHealth& h);
/// A failed row remapping (no spare rows): error; one pending: warning.
std::optional<HealthFinding> row_remapping(int gpu, const GpuHealth& h);
/// Hardware slowdown, hardware thermal or power brake: error; software
/// thermal slowdown: warning. A power cap or idle clocks are normal.
std::optional<HealthFinding> clock_slowdown(int gpu, const GpuHealth& h);
/// Retired pages pending (pre-Ampere): warning.
std::optional<HealthFinding> retired_pages(const Gpu& g);
/// The NVLink fabric not set up, or its registration failed: error.
std::optional<HealthFinding> fabric(const Gpu& g);

/// A GpuHealth verdict applied to a sensed Gpu: its index and its health.
template <GpuHealthFn Fn>
std::optional<HealthFinding> on_gpu(const Gpu& g) {
  return Fn(g.index, g.health);
}

/// Every finding above, for every GPU, in GPU order.
std::vector<HealthFinding> gpu_health(const Machine& m);

/// True for a problem that only says the NVIDIA libraries are not installed.
bool libraries_absent(const Problem& p);

/// True when NVIDIA software is there but fails: NVML or the CUDA driver
/// reported an error (a driver/library mismatch, a module not loaded, no
/// permission ...), or a GPU was lost. False when the libraries are simply
/// absent: a CPU machine, or Jetson, whose NVML is absent by design.
bool driver_fails(const Machine& m);

/// True when the driver failed before any GPU could be read (driver_fails,
/// and no GPU): there may be GPUs, but how many and which is unknown, so
/// nothing may say "no GPU" or count 0.
bool gpus_unreadable(const Machine& m);

/// True when NVML said its library and the loaded kernel module differ
/// (NVML_ERROR_LIB_RM_VERSION_MISMATCH, 18: the driver was upgraded without
/// a reboot): the GPUs are there, unreadable until a reboot or a reload of
/// the nvidia modules.
bool driver_needs_reload(const Machine& m);

}  // namespace gpuenv

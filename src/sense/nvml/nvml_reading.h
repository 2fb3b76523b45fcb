// Reading a GPU's live state, the one home: `gpuenv export`'s rounds
// (sense/nvml/nvml_sampler.h), `gpuenv check --long`'s watcher
// (sense/nvml/nvml_watch.h) and `gpuenv run`'s job watcher
// (sense/nvml/job_watch.h) all take their per-GPU values from here into a
// DeviceReading (model/gpu_reading.h), and each keeps its own summary; the
// one-shot health that doctor and check judge (sense/nvml/nvml_device.cc)
// is read_health's GpuHealth (model/hardware/gpu_health.h), the same the reading holds.
#pragma once

#include "model/gpu_reading.h"
#include "sense/nvml/nvml_call.h"

namespace gpuenv {

/// Utilisation and memory: what a MIG device answers too.
void read_usage(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r);

/// The health every reader shares: the temperature, the reasons the clocks
/// are held back, the volatile ECC counts and row remapping.
void read_health(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, GpuHealth* h);

/// A whole GPU's live state: read_usage's, then power and energy, the
/// clocks, and read_health's. What NVML does not answer stays unknown.
void read_live_state(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r);

/// read_live_state for a watcher, which reports nothing per call: a failed
/// call leaves its value unknown, and a lost GPU answers nothing more.
DeviceReading read_live_state(const Nvml& nvml, nvml::Device d);

}  // namespace gpuenv

// NVML GPM (GPU performance monitoring, Hopper and newer), the one home:
// `gpuenv export`'s sampler and the job watcher both read a device's GPM
// figures through GpmDevice. GPM counts in hardware; a figure is the
// activity between two samples, so each device keeps its previous sample.
// Where GPM is absent (a driver before R520, a GPU before Hopper, a MIG
// instance NVML cannot sample) every figure stays unknown, never zero.
#pragma once

#include <optional>

#include "sense/nvml/nvml_call.h"

namespace gpuenv {

/// GPM's figures between two samples: ratios 0..1 (NVML gives percent),
/// and PCIe traffic in bytes a second (NVML gives MiB/s). A metric NVML did
/// not answer stays nullopt.
struct GpmRatios {
  std::optional<double> gr_engine_active;  // NVML_GPM_METRIC_GRAPHICS_UTIL
  std::optional<double> sm_active;         // SM_UTIL
  std::optional<double> sm_occupancy;      // SM_OCCUPANCY
  std::optional<double> tensor_active;     // ANY_TENSOR_UTIL
  std::optional<double> fp32_active;       // FP32_UTIL (non-tensor)
  std::optional<double> fp16_active;       // FP16_UTIL (non-tensor)
  std::optional<double> dram_active;       // DRAM_BW_UTIL
  std::optional<double> pcie_tx_bytes_per_second;  // PCIE_TX_PER_SEC (from the GPU)
  std::optional<double> pcie_rx_bytes_per_second;  // PCIE_RX_PER_SEC (to the GPU)
  friend bool operator==(const GpmRatios&, const GpmRatios&) = default;
};

/// One device's GPM: a whole GPU, or a MIG instance sampled through its
/// parent GPU (nvmlGpmMigSampleGet). Owns NVML's two sample buffers and
/// frees them; move-only. The Nvml must outlive it.
class GpmDevice {
 public:
  GpmDevice() = default;
  /// gpu: the GPU's handle (for a MIG instance, its parent's);
  /// gpu_instance: the MIG instance's GPU instance id, nullopt for the GPU.
  GpmDevice(const Nvml& nvml, nvml::Device gpu, std::optional<unsigned> gpu_instance = std::nullopt);
  ~GpmDevice();
  GpmDevice(GpmDevice&& o) noexcept;
  GpmDevice& operator=(GpmDevice&& o) noexcept;
  GpmDevice(const GpmDevice&) = delete;
  GpmDevice& operator=(const GpmDevice&) = delete;

  /// Takes a sample and returns the figures since the previous one:
  /// nullopt on the first call, where GPM is unsupported (asked once, then
  /// remembered), and after a failed call (reported through `call`, as
  /// every NVML call; the next sample starts afresh).
  std::optional<GpmRatios> next(NvmlCaller& call);

  /// False once NVML said GPM is unsupported here (or lacks its functions).
  bool supported() const { return supported_.value_or(true); }
  /// The GPU instance id this samples (nullopt: the whole GPU).
  std::optional<unsigned> gpu_instance() const { return instance_; }

 private:
  bool query_support(NvmlCaller& call);
  bool take(NvmlCaller& call, nvml::GpmSample s);
  std::optional<GpmRatios> metrics(NvmlCaller& call) const;
  void release();

  const Nvml* nvml_ = nullptr;
  nvml::Device gpu_ = nullptr;
  std::optional<unsigned> instance_;
  std::optional<bool> supported_;
  nvml::GpmSample previous_ = nullptr, current_ = nullptr;
  bool have_previous_ = false;
};

/// A GPM percentage as a ratio: clamped to 0..1 (the counters overshoot
/// 100 by a little at the edges of a window); nullopt when not finite.
std::optional<double> gpm_ratio(double percent);

/// A GPM MiB/s figure in bytes a second; nullopt when not finite or negative.
std::optional<double> gpm_bytes_per_second(double mib_per_second);

}  // namespace gpuenv

// `gpuenv export`'s view of NVML: a periodic thread (sys/periodic.h) reads
// every GPU and MIG device each interval into Readings, each GPU's live
// state through sense/nvml/nvml_reading.h (Xid events taken without
// waiting) and the processes on each device with their memory and, on whole
// GPUs, their SM use since the round before; latest() hands out the newest round without waiting on NVML,
// so a scrape never does.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model/gpu_reading.h"
#include "model/machine.h"
#include "sense/dcgm/dcgm_profiler.h"
#include "sense/nvml/nvml_gpm.h"
#include "sense/nvml/nvml_library.h"
#include "sense/nvml/nvml_session.h"
#include "sys/periodic.h"

namespace gpuenv {

/// What a round remembers of the rounds before it: each GPU's name, UUID
/// and PCI address once read (a GPU lost later keeps its labels), each
/// device's last GPM sample and NVLink counters, the time of the newest
/// per-process utilisation sample, and the count of failed calls.
struct SamplerMemory {
  struct Identity {
    std::optional<std::string> uuid, name, pci_bus_id;
    std::optional<int> minor_number;
    nvml::Device handle = nullptr;          // what Xid events name the GPU by
    bool xid_tried = false, xid_watched = false;  // registered for Xid events
    std::uint64_t xid_last = 0, xid_events = 0;
    std::optional<std::uint64_t> nvlink_bytes;  // NVLink data both ways at the last round
    double nvlink_at = 0;                       // that round's time
    /// The newest nvmlDeviceGetProcessUtilization sample seen (CPU µs), the
    /// next round's lastSeenTimeStamp; 0: none yet (ask for all).
    std::uint64_t process_samples_seen = 0;
  };
  std::vector<Identity> gpus;
  std::map<std::pair<int, int>, GpmDevice> gpm;  // by (GPU, MIG slot or -1)
  std::uint64_t nvml_errors_total = 0;
  std::optional<std::string> driver_version;
  nvml::EventSet xid_set = nullptr;  // nvmlEventSetCreate's, on first use
  /// DCGM for the whole GPUs GPM cannot sample: started once, at the first
  /// round that finds one (`dcgm_library` "": never), sampling every `dcgm_interval`.
  std::string dcgm_library;
  std::chrono::milliseconds dcgm_interval{5000};
  std::unique_ptr<DcgmProfiler> dcgm;
  bool dcgm_tried = false;
  std::optional<std::string> dcgm_problem;  // why it did not start
};

/// One round over an initialised NVML: every GPU in NVML order, each
/// followed by its MIG devices. `now` becomes Readings::sampled_at.
Readings sample_nvml(const Nvml& nvml, SamplerMemory* memory, double now);

/// Frees the Xid event set sample_nvml made (before nvmlShutdown).
void release_nvml_events(const Nvml& nvml, SamplerMemory* memory);

/// Seconds on the steady clock (what sampled_at and a scrape's age use).
double steady_seconds();

class NvmlSampler {
 public:
  NvmlSampler() = default;
  ~NvmlSampler();
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  /// Loads NVML from `library`, initialises it, takes the first round and
  /// starts the thread. False with the Problem in *err (library missing,
  /// nvmlInit failing). GPUs before Hopper take their profiling fields from
  /// `dcgm_library` where it loads ("": never tried).
  bool start(const std::string& library, std::chrono::milliseconds interval, Problem* err,
             const std::string& dcgm_library = "");
  /// The newest round (the first one until the thread has taken another).
  std::shared_ptr<const Readings> latest() const;
  /// Ends the thread (after the round in progress) and shuts NVML down.
  void stop();

 private:
  void round();

  NvmlSession session_;  // declared first: shut down after the rest is done with it
  SamplerMemory memory_;
  Periodic thread_;
  mutable std::mutex mutex_;  // latest_
  std::shared_ptr<const Readings> latest_;
};

}  // namespace gpuenv

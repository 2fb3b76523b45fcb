// DCGM's profiling fields (DCGM_FI_PROF_*) for the GPUs NVML GPM cannot
// sample (before Hopper): libdcgm.so.4 loaded at run time (one binary runs
// with or without it), an embedded host engine in this process that samples
// on its own thread, and the latest values read back each round of the
// exporter's sampler (sense/nvml/nvml_sampler.h), never by a scrape.
// Every failure is a message, and the figures then stay unknown.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "sense/dcgm/dcgm_api.h"
#include "sense/nvml/nvml_gpm.h"
#include "sys/dynamic_library.h"

namespace gpuenv {

/// Each DCGM function gpuenv uses; all required but the v1 start, which
/// stands in for an older library's missing dcgmStartEmbedded_v2, and errorString.
struct DcgmFunctions {
  Fn<dcgm::InitFn> init;
  Fn<dcgm::ShutdownFn> shutdown;
  Fn<dcgm::StartEmbeddedV2Fn> start_embedded_v2;
  Fn<dcgm::StartEmbeddedFn> start_embedded;
  Fn<dcgm::StopEmbeddedFn> stop_embedded;
  Fn<dcgm::GetAllSupportedDevicesFn> supported_devices;
  Fn<dcgm::GroupCreateFn> group_create;
  Fn<dcgm::GroupDestroyFn> group_destroy;
  Fn<dcgm::GroupAddDeviceFn> group_add_device;
  Fn<dcgm::FieldGroupCreateFn> field_group_create;
  Fn<dcgm::FieldGroupDestroyFn> field_group_destroy;
  Fn<dcgm::WatchFieldsFn> watch_fields;
  Fn<dcgm::UnwatchFieldsFn> unwatch_fields;
  Fn<dcgm::EntitiesGetLatestValuesFn> latest_values;
  Fn<dcgm::ErrorStringFn> error_string;
};

/// Whether `library` loads (dlopen only: no host engine is started); false
/// with dlerror()'s text in *err. What doctor asks.
bool dcgm_library_loads(const std::string& library, std::string* err);

class DcgmProfiler {
 public:
  DcgmProfiler() = default;
  ~DcgmProfiler() { stop(); }
  DcgmProfiler(const DcgmProfiler&) = delete;
  DcgmProfiler& operator=(const DcgmProfiler&) = delete;

  /// Loads `library`, starts the embedded host engine and watches the
  /// profiling fields of the GPUs with these UUIDs, sampled every
  /// `interval`. False with *err naming the call that failed (and what
  /// it said); nothing is left running then.
  bool start(const std::string& library, const std::vector<std::string>& uuids, std::chrono::milliseconds interval,
             std::string* err);
  /// The newest values, by GPU UUID: a field DCGM has no value for (blank,
  /// not yet sampled, not supported) stays nullopt. False with *err when
  /// the call failed.
  bool latest(std::map<std::string, GpmRatios>* out, std::string* err) const;
  /// Unwatches, destroys the groups and stops the host engine; idempotent.
  void stop();

 private:
  bool fail(const char* call, dcgm::Return rc, std::string* err);
  bool start_engine(std::string* err);
  bool find_gpus(const std::vector<std::string>& uuids, std::string* err);
  bool watch(std::chrono::milliseconds interval, std::string* err);

  DynamicLibrary library_;
  DcgmFunctions fn_;
  bool initialised_ = false, engine_ = false, group_ = false, field_group_ = false, watching_ = false;
  dcgm::Handle handle_ = 0;
  dcgm::GroupId group_id_ = 0;
  dcgm::FieldGroupId field_group_id_ = 0;
  std::map<unsigned, std::string> gpus_;  // DCGM's GPU id -> UUID
};

}  // namespace gpuenv

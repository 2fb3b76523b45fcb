// The NVML functions gpuenv calls, loaded from libnvidia-ml at run time.
#pragma once

#include <string>

#include "model/machine.h"
#include "sys/dynamic_library.h"
#include "sense/nvml/nvml_api.h"

namespace gpuenv {

/// Each NVML function gpuenv uses, newest version the library exports.
/// Required: init, shutdown, count, handle. The rest may be null (an old
/// driver), and then the fields they would fill stay unknown.
struct NvmlFunctions {
  Fn<nvml::InitFn> init;
  Fn<nvml::ShutdownFn> shutdown;
  Fn<nvml::ErrorStringFn> error_string;
  Fn<nvml::SystemGetDriverVersionFn> driver_version;
  Fn<nvml::SystemGetCudaDriverVersionFn> cuda_driver_version;
  Fn<nvml::DeviceGetCountFn> count;
  Fn<nvml::DeviceGetHandleByIndexFn> handle;
  Fn<nvml::DeviceGetStringFn> name, uuid;
  Fn<nvml::DeviceGetPciInfoFn> pci_info;       // _v3 or _v2
  Fn<nvml::DeviceGetPciInfoV1Fn> pci_info_v1;  // the unversioned one
  Fn<nvml::DeviceGetCudaComputeCapabilityFn> compute_capability;
  Fn<nvml::DeviceGetMemoryInfoV2Fn> memory_v2;
  Fn<nvml::DeviceGetMemoryInfoFn> memory;
  Fn<nvml::DeviceGetMigModeFn> mig_mode;
  Fn<nvml::DeviceGetMaxMigDeviceCountFn> max_mig_devices;
  Fn<nvml::DeviceGetMigDeviceHandleByIndexFn> mig_handle;
  Fn<nvml::DeviceGetUintFn> gpu_instance_id, compute_instance_id;
  Fn<nvml::DeviceGetAttributesFn> attributes;  // a MIG device's share of its GPU
  Fn<nvml::DeviceGetEnableStateFn> persistence_mode;
  Fn<nvml::DeviceGetComputeModeFn> compute_mode;
  Fn<nvml::DeviceGetUintFn> pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max;
  Fn<nvml::DeviceGetUintFn> power_limit;
  Fn<nvml::DeviceGetMaxClockInfoFn> max_clock;
  Fn<nvml::DeviceGetNvLinkStateFn> nvlink_state;
  Fn<nvml::DeviceGetCpuAffinityFn> cpu_affinity;
  Fn<nvml::DeviceGetNumaNodeIdFn> numa_node;
  Fn<nvml::DeviceGetTopologyCommonAncestorFn> topology;
  Fn<nvml::DeviceGetP2PStatusFn> p2p_status;
  // Health (SenseOptions::with_health only).
  Fn<nvml::DeviceGetClocksEventReasonsFn> clocks_event_reasons;
  Fn<nvml::DeviceGetTemperatureFn> temperature;
  Fn<nvml::DeviceGetEccModeFn> ecc_mode;
  Fn<nvml::DeviceGetTotalEccErrorsFn> total_ecc_errors;
  Fn<nvml::DeviceGetRetiredPagesPendingStatusFn> retired_pages_pending;
  Fn<nvml::DeviceGetRemappedRowsFn> remapped_rows;
  Fn<nvml::DeviceGetGpuFabricInfoFn> fabric_info;
  // A GPU's live state (sense/nvml/nvml_reading.h), and the exporter's.
  Fn<nvml::DeviceGetUtilizationRatesFn> utilization;
  Fn<nvml::DeviceGetClockInfoFn> clock;  // current clocks
  Fn<nvml::DeviceGetPowerUsageFn> power_usage;
  Fn<nvml::DeviceGetTotalEnergyConsumptionFn> energy;
  Fn<nvml::DeviceGetUintFn> pcie_replay;
  // Watched while `gpuenv run` runs a job (sense/nvml/job_watch.h), and
  // listed each round by the exporter (sense/nvml/nvml_sampler.cc).
  Fn<nvml::DeviceGetComputeRunningProcessesFn> processes;  // _v3 or _v2
  Fn<nvml::DeviceGetGraphicsRunningProcessesFn> graphics_processes;  // _v3 or _v2
  Fn<nvml::DeviceGetProcessUtilizationFn> process_utilization;
  Fn<nvml::DeviceGetPcieThroughputFn> pcie_throughput;
  // dcgm-exporter's fields and Xid (sense/nvml/nvml_sampler.cc).
  Fn<nvml::DeviceGetUintFn> minor_number;
  Fn<nvml::DeviceGetFieldValuesFn> field_values;
  Fn<nvml::DeviceGetCodecUtilizationFn> encoder_utilization, decoder_utilization;
  Fn<nvml::DeviceGetNvLinkErrorCounterFn> nvlink_error_counter;
  Fn<nvml::EventSetCreateFn> event_set_create;
  Fn<nvml::DeviceRegisterEventsFn> register_events;
  Fn<nvml::EventSetWaitFn> event_set_wait;
  Fn<nvml::EventSetFreeFn> event_set_free;
  // NVML GPM, for both (sense/nvml/nvml_gpm.h); absent before R520.
  Fn<nvml::GpmQueryDeviceSupportFn> gpm_query_support;
  Fn<nvml::GpmSampleAllocFn> gpm_sample_alloc;
  Fn<nvml::GpmSampleFreeFn> gpm_sample_free;
  Fn<nvml::GpmSampleGetFn> gpm_sample_get;
  Fn<nvml::GpmMigSampleGetFn> gpm_mig_sample_get;
  Fn<nvml::GpmMetricsGetFn> gpm_metrics_get;
};

/// An open libnvidia-ml and its functions.
struct Nvml {
  DynamicLibrary library;
  NvmlFunctions fn;
};

/// Opens `library` and resolves the table. On failure returns false with
/// the Problem (nvml_library_not_found or nvml_symbol_missing) in *err.
/// The library stays mapped after `nvml` is destroyed (RTLD_NODELETE):
/// one-shot sensing leaves NVML initialised for the process's exit to
/// release, and an initialised NVML must not be unmapped under itself.
bool load_nvml(const std::string& library, Nvml* nvml, Problem* err);

/// nvmlErrorString's text for rc, or nullptr when the library lacks it.
const char* nvml_error_text(const Nvml& nvml, nvml::Return rc);

}  // namespace gpuenv

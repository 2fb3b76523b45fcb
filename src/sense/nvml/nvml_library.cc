#include "sense/nvml/nvml_library.h"

#include <vector>

#include "sense/nvml/nvml_errors.h"

namespace gpuenv {
namespace {

std::vector<Symbol> symbol_table(NvmlFunctions* f) {
  return {
      {{"nvmlInit_v2", "nvmlInit"}, &f->init, true},
      {{"nvmlShutdown"}, &f->shutdown, true},
      {{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, &f->count, true},
      {{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}, &f->handle, true},
      {{"nvmlErrorString"}, &f->error_string, false},
      {{"nvmlSystemGetDriverVersion"}, &f->driver_version, false},
      {{"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"},
       &f->cuda_driver_version,
       false},
      {{"nvmlDeviceGetName"}, &f->name, false},
      {{"nvmlDeviceGetUUID"}, &f->uuid, false},
      {{"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"}, &f->pci_info, false},
      {{"nvmlDeviceGetPciInfo"}, &f->pci_info_v1, false},
      {{"nvmlDeviceGetCudaComputeCapability"}, &f->compute_capability, false},
      {{"nvmlDeviceGetMemoryInfo_v2"}, &f->memory_v2, false},
      {{"nvmlDeviceGetMemoryInfo"}, &f->memory, false},
      {{"nvmlDeviceGetMigMode"}, &f->mig_mode, false},
      {{"nvmlDeviceGetMaxMigDeviceCount"}, &f->max_mig_devices, false},
      {{"nvmlDeviceGetMigDeviceHandleByIndex"}, &f->mig_handle, false},
      {{"nvmlDeviceGetGpuInstanceId"}, &f->gpu_instance_id, false},
      {{"nvmlDeviceGetComputeInstanceId"}, &f->compute_instance_id, false},
      {{"nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes"}, &f->attributes, false},
      {{"nvmlDeviceGetPersistenceMode"}, &f->persistence_mode, false},
      {{"nvmlDeviceGetComputeMode"}, &f->compute_mode, false},
      {{"nvmlDeviceGetCurrPcieLinkGeneration"}, &f->pcie_gen_current, false},
      {{"nvmlDeviceGetMaxPcieLinkGeneration"}, &f->pcie_gen_max, false},
      {{"nvmlDeviceGetCurrPcieLinkWidth"}, &f->pcie_width_current, false},
      {{"nvmlDeviceGetMaxPcieLinkWidth"}, &f->pcie_width_max, false},
      {{"nvmlDeviceGetPowerManagementLimit"}, &f->power_limit, false},
      {{"nvmlDeviceGetMaxClockInfo"}, &f->max_clock, false},
      {{"nvmlDeviceGetNvLinkState"}, &f->nvlink_state, false},
      {{"nvmlDeviceGetCpuAffinity"}, &f->cpu_affinity, false},
      {{"nvmlDeviceGetNumaNodeId"}, &f->numa_node, false},
      {{"nvmlDeviceGetTopologyCommonAncestor"}, &f->topology, false},
      {{"nvmlDeviceGetP2PStatus"}, &f->p2p_status, false},
      {{"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"},
       &f->clocks_event_reasons,
       false},
      {{"nvmlDeviceGetTemperature"}, &f->temperature, false},
      {{"nvmlDeviceGetEccMode"}, &f->ecc_mode, false},
      {{"nvmlDeviceGetTotalEccErrors"}, &f->total_ecc_errors, false},
      {{"nvmlDeviceGetRetiredPagesPendingStatus"}, &f->retired_pages_pending, false},
      {{"nvmlDeviceGetRemappedRows"}, &f->remapped_rows, false},
      {{"nvmlDeviceGetGpuFabricInfo"}, &f->fabric_info, false},
      {{"nvmlDeviceGetUtilizationRates"}, &f->utilization, false},
      {{"nvmlDeviceGetClockInfo"}, &f->clock, false},
      {{"nvmlDeviceGetPowerUsage"}, &f->power_usage, false},
      {{"nvmlDeviceGetTotalEnergyConsumption"}, &f->energy, false},
      {{"nvmlDeviceGetPcieReplayCounter"}, &f->pcie_replay, false},
      {{"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"}, &f->processes, false},
      {{"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2"},
       &f->graphics_processes,
       false},
      {{"nvmlDeviceGetProcessUtilization"}, &f->process_utilization, false},
      {{"nvmlDeviceGetPcieThroughput"}, &f->pcie_throughput, false},
      {{"nvmlDeviceGetMinorNumber"}, &f->minor_number, false},
      {{"nvmlDeviceGetFieldValues"}, &f->field_values, false},
      {{"nvmlDeviceGetEncoderUtilization"}, &f->encoder_utilization, false},
      {{"nvmlDeviceGetDecoderUtilization"}, &f->decoder_utilization, false},
      {{"nvmlDeviceGetNvLinkErrorCounter"}, &f->nvlink_error_counter, false},
      {{"nvmlEventSetCreate"}, &f->event_set_create, false},
      {{"nvmlDeviceRegisterEvents"}, &f->register_events, false},
      {{"nvmlEventSetWait_v2", "nvmlEventSetWait"}, &f->event_set_wait, false},
      {{"nvmlEventSetFree"}, &f->event_set_free, false},
      {{"nvmlGpmQueryDeviceSupport"}, &f->gpm_query_support, false},
      {{"nvmlGpmSampleAlloc"}, &f->gpm_sample_alloc, false},
      {{"nvmlGpmSampleFree"}, &f->gpm_sample_free, false},
      {{"nvmlGpmSampleGet"}, &f->gpm_sample_get, false},
      {{"nvmlGpmMigSampleGet"}, &f->gpm_mig_sample_get, false},
      {{"nvmlGpmMetricsGet"}, &f->gpm_metrics_get, false},
  };
}

}  // namespace

bool load_nvml(const std::string& library, Nvml* nvml, Problem* err) {
  std::string text;
  if (!nvml->library.open(library, &text, /*keep_loaded=*/true)) {
    *err = nvml_library_not_found(library, text);
    return false;
  }
  if (!nvml->library.resolve(symbol_table(&nvml->fn), &text)) {
    *err = nvml_symbol_missing(library, text);
    return false;
  }
  return true;
}

const char* nvml_error_text(const Nvml& nvml, nvml::Return rc) {
  return nvml.fn.error_string.call != nullptr ? nvml.fn.error_string.call(rc) : nullptr;
}

}  // namespace gpuenv

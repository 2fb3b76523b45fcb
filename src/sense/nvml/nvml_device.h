// Queries of a loaded, initialised NVML: the system, each GPU, each pair.
// Failures become Problems; a GPU that stops answering (lost, needs a
// reset) gets Gpu::problem and the rest are still queried.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/machine.h"
#include "sense/nvml/nvml_library.h"

namespace gpuenv {

/// What to read about each GPU besides NVML's answers.
struct NvmlQuery {
  /// SenseOptions::root: a GPU's NUMA-local CPUs and NUMA node come from
  /// <root>/sys/bus/pci/devices/<address>/{local_cpulist,numa_node}, and
  /// from NVML only when those files are missing or unreadable.
  std::string root = "/";
  /// SenseOptions::with_health: clock event reasons, temperature, ECC, page
  /// retirement, row remapping and the NVLink fabric state too.
  bool with_health = false;
  /// SenseOptions::with_details: the persistence and compute modes, the power
  /// limit, the PCIe link, the maximum clocks and the active NVLink links.
  bool with_details = true;
};

/// At most this many threads query GPUs and GPU pairs at once.
inline constexpr std::size_t kMaxNvmlThreads = 16;

/// The driver version and the CUDA version it supports.
void query_nvml_system(const Nvml& nvml, Nvidia* nvidia);

/// Every GPU in NVML order, and each pair a < b of GPUs that have no
/// problem (topology and P2P status), in (a, b) order. After the handles,
/// the GPUs and the pairs are queried all at once (NVML is thread-safe);
/// the results and their Problems come back in the order a serial run
/// gives them. False when NVML cannot count the GPUs (the Problem is in
/// *problems).
bool query_nvml_devices(const Nvml& nvml, const NvmlQuery& query, std::vector<Gpu>* gpus,
                        std::vector<GpuPair>* pairs, std::vector<Problem>* problems);

/// NVML's spelling of a PCI address: "00000000:3B:00.0".
std::string format_pci_bus_id(unsigned domain, unsigned bus, unsigned device);

/// nvmlComputeMode_t -> default|exclusive_thread|prohibited|exclusive_process.
std::optional<std::string> compute_mode_name(int mode);

/// nvmlGpuTopologyLevel_t -> internal|single|multiple|hostbridge|node|system.
std::optional<std::string> topology_name(int level);

/// nvmlGpuFabricState_t -> not_supported|not_started|in_progress|completed.
std::optional<std::string> fabric_state_name(unsigned char state);

/// nvmlGpuP2PStatus_t -> ok|chipset_not_supported|gpu_not_supported|
/// topology_not_supported|disabled_by_regkey|not_supported|unknown.
std::string p2p_status_name(int status);

}  // namespace gpuenv

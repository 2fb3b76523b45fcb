// Machine: everything gpuenv senses, as one plain value.
// Sense fills it, decide reads it, and it round-trips through the versioned
// JSON snapshot (docs/snapshot.md). Unknown is std::nullopt, never zero.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware/gpu_health.h"
#include "model/measurement.h"

namespace gpuenv {

/// Bumped whenever a field changes meaning or is removed; additions keep it.
inline constexpr int kSnapshotSchemaVersion = 1;

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  int value() const { return major * 10 + minor; }  // 9.0 -> 90
  friend bool operator==(const ComputeCapability&, const ComputeCapability&) = default;
  friend auto operator<=>(const ComputeCapability&, const ComputeCapability&) = default;
};

/// "8.6": how the capability is written everywhere (text, JSON, logs).
inline std::string cc_string(ComputeCapability cc) {
  return std::to_string(cc.major) + "." + std::to_string(cc.minor);
}

/// A failure of a sensing step: what failed, and what the user can do.
struct Problem {
  std::string source;   // "nvml", "cuda", "host"
  std::string code;     // stable identifier, e.g. "nvml_library_not_found"
  std::string message;  // what failed, naming the call
  std::string fix;      // what to do about it
  friend bool operator==(const Problem&, const Problem&) = default;
};

struct PcieLink {
  std::optional<int> gen_current, gen_max, width_current, width_max;
  friend bool operator==(const PcieLink&, const PcieLink&) = default;
};

/// One PCIe lane, one direction, after line coding (8b/10b to Gen2,
/// 128b/130b from Gen3, FLIT mode at Gen6), in GB/s (1e9 bytes); nullopt
/// for a generation out of 1-6.
inline std::optional<double> pcie_lane_gbps(int gen) {
  constexpr double kLane[] = {0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
  if (gen < 1 || gen > 6) return std::nullopt;
  return kLane[gen - 1];
}

/// A MIG device's share of its GPU, as nvmlDeviceGetAttributes_v2 reports it:
/// what GPU Feature Discovery labels as gpu.multiprocessors, gpu.slices.*
/// and gpu.engines.*.
struct MigAttributes {
  int multiprocessors = 0;
  int copy_engines = 0, decoders = 0, encoders = 0, jpeg_decoders = 0, ofas = 0;  // shared engines
  int gpu_instance_slices = 0, compute_instance_slices = 0;
  std::uint64_t memory_mib = 0;
  friend bool operator==(const MigAttributes&, const MigAttributes&) = default;
};

struct MigDevice {
  int index = 0;  // position under its parent GPU
  std::string uuid;  // "MIG-..."
  std::optional<std::string> name;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<int> gpu_instance_id, compute_instance_id;
  std::optional<MigAttributes> attributes;
  friend bool operator==(const MigDevice&, const MigDevice&) = default;
};

struct Gpu {
  int index = 0;  // NVML index (PCI order), not the CUDA ordinal
  std::optional<std::string> name, uuid, pci_bus_id;
  // sysfs's PCI class of the device: "0x030200" (3D controller, a compute
  // GPU) or "0x030000" (VGA, a GPU that drives displays).
  std::optional<std::string> pci_class;
  std::optional<ComputeCapability> compute_capability;
  std::optional<std::uint64_t> memory_total_bytes, memory_free_bytes;
  std::optional<bool> mig_enabled;
  std::vector<MigDevice> mig_devices;
  std::optional<bool> persistence_mode;
  std::optional<std::string> compute_mode;  // default|exclusive_thread|prohibited|exclusive_process
  PcieLink pcie;
  std::optional<std::uint32_t> power_limit_mw;
  std::optional<std::uint32_t> max_sm_clock_mhz, max_memory_clock_mhz;
  std::optional<int> nvlink_active_links;
  std::optional<std::vector<int>> cpu_affinity;  // NUMA-local CPUs
  std::optional<int> numa_node;
  std::optional<int> multiprocessor_count;  // from the CUDA driver only
  // Health, read for doctor (SenseOptions::with_health); nullopt: not read
  // or not supported by this GPU/driver. The live part (model/hardware/gpu_health.h;
  // the snapshot holds its clock events, temperature, uncorrected ECC count
  // and remapping pending/failure), then what only a one-shot look asks.
  GpuHealth health;
  std::optional<bool> ecc_enabled;            // current ECC mode (off: health has no ECC counts)
  std::optional<bool> retired_pages_pending;  // pre-Ampere page retirement
  // NVLink fabric (Hopper+ NVSwitch systems): not_supported|not_started|
  // in_progress|completed, and the registration's NVML return code.
  std::optional<std::string> fabric_state;
  std::optional<int> fabric_status;
  std::optional<Problem> problem;  // e.g. the GPU fell off the bus
  friend bool operator==(const Gpu&, const Gpu&) = default;
};

/// How two GPUs reach each other (NVML's topology and P2P queries).
struct GpuPair {
  int a = 0, b = 0;  // NVML indices, a < b
  // Common ancestor: internal|single|multiple|hostbridge|node|system
  std::optional<std::string> topology;
  // P2P read status: ok|chipset_not_supported|gpu_not_supported|
  // topology_not_supported|disabled_by_regkey|not_supported|unknown
  std::optional<std::string> p2p_read;
  std::optional<std::string> p2p_nvlink;
  friend bool operator==(const GpuPair&, const GpuPair&) = default;
};

struct Nvidia {
  std::optional<std::string> nvml_library;   // path or soname that loaded
  std::optional<std::string> driver_version;  // "580.95.05"
  std::optional<int> cuda_driver_version;     // 13000 for CUDA 13.0
  std::optional<std::string> cuda_library;    // libcuda that loaded (when tried)
  std::optional<int> cuda_init_result;        // cuInit's CUresult; nullopt: not tried
  // libdcgm that loaded, asked by doctor where a GPU predates Hopper (DCGM
  // then serves the exporter's profiling fields); nullopt: not loaded.
  std::optional<std::string> dcgm_library;
  std::vector<Problem> problems;
  friend bool operator==(const Nvidia&, const Nvidia&) = default;
};

struct NumaNode {
  int index = 0;
  std::vector<int> cpus;
  std::optional<std::uint64_t> memory_bytes;
  friend bool operator==(const NumaNode&, const NumaNode&) = default;
};

struct NetInterface {
  std::string name;
  std::optional<bool> up;
  bool loopback = false;
  bool virtual_device = false;  // bridge, veth, docker0, ... (no /sys/class/net/X/device)
  friend bool operator==(const NetInterface&, const NetInterface&) = default;
};

struct IbDevice {
  std::string name;  // mlx5_0
  std::optional<std::string> link_layer;  // InfiniBand|Ethernet (RoCE)
  std::optional<std::string> state;  // port 1 state, e.g. "4: ACTIVE"
  friend bool operator==(const IbDevice&, const IbDevice&) = default;
};

struct Host {
  std::optional<std::string> hostname;
  std::optional<int> online_cpus;
  std::optional<std::vector<int>> affinity_cpus;  // sched_getaffinity
  std::optional<double> cgroup_cpu_quota;          // CPUs, e.g. 4.5; nullopt: none
  std::optional<int> usable_cpus;                  // min(affinity, ceil(quota))
  std::optional<std::uint64_t> memory_total_bytes, cgroup_memory_limit_bytes;
  std::vector<NumaNode> numa_nodes;
  std::optional<std::uint64_t> shm_bytes;  // size of /dev/shm
  // Whether a file could be created and removed in /dev/shm, as DataLoader
  // workers do (shm_open); nullopt: not tried (a fake root, an older
  // snapshot). shm_error says why not: "...: Read-only file system".
  std::optional<bool> shm_writable;
  std::optional<std::string> shm_error;
  std::optional<std::string> container;    // docker|podman|kubernetes|containerd|lxc|other; nullopt: none
  std::vector<std::string> nvidia_device_nodes;  // /dev/nvidia0, /dev/nvidiactl, ...
  std::vector<IbDevice> ib_devices;
  std::vector<NetInterface> interfaces;
  // RLIMIT_MEMLOCK (soft), bytes; UINT64_MAX (RLIM_INFINITY) is unlimited.
  std::optional<std::uint64_t> memlock_bytes;
  std::vector<Problem> problems;
  // The physical cores of affinity_cpus, each as its logical CPUs (SMT
  // siblings) in the affinity, ordered by first CPU: [[0, 64], [1, 65], ...].
  // nullopt: not sensed (older snapshots), and rules count logical CPUs.
  std::optional<std::vector<std::vector<int>>> cpu_cores;
  // The machine's model, /sys/class/dmi/id/product_name trimmed
  // ("PowerEdge R750xa"; GFD's gpu.machine label); nullopt: no DMI (ARM
  // boards, some VMs) or not sensed.
  std::optional<std::string> product_name;
  friend bool operator==(const Host&, const Host&) = default;
};

/// The CUDA code one binary carries (its .nv_fatbin), read by gpuenv's own
/// parser (sense/fatbin/fatbin_parse.h).
struct CudaBinary {
  std::string path;
  std::optional<std::string> package;  // top-level dir under site-packages ("flash_attn")
  // Distinct targets, sorted: "sm_90", "sm_90a", "sm_100f", "compute_90".
  std::vector<std::string> targets;
  std::optional<std::string> error;  // why it could not be read
  // The pip distribution that installed it, from site-packages'
  // *.dist-info/RECORD ("flash_attn"); nullopt when no RECORD lists it.
  std::optional<std::string> distribution;
  friend bool operator==(const CudaBinary&, const CudaBinary&) = default;
};

/// The PyTorch that `python3` (or the active venv/conda env) would import,
/// read from its files without importing it.
struct Torch {
  std::string version;                      // "2.11.0+cu130"
  std::optional<std::string> cuda_version;  // "13.0"; nullopt for a CPU build
  std::optional<std::string> path;          // site-packages/torch
  std::optional<std::string> python;        // the interpreter it was found for
  // Whether torch's package holds compiled bytecode (torch/__pycache__):
  // without it every start compiles its Python sources again.
  std::optional<bool> bytecode_cached;
  std::optional<CudaBinary> libtorch_cuda;  // read when asked (doctor)
  std::vector<CudaBinary> extensions;       // other CUDA libraries (--extensions)
  friend bool operator==(const Torch&, const Torch&) = default;
};

struct Machine {
  int schema_version = kSnapshotSchemaVersion;
  std::optional<std::string> gpuenv_version;  // of the gpuenv that sensed it
  std::optional<std::string> sensed_at;       // RFC 3339 UTC
  Nvidia nvidia;
  std::vector<Gpu> gpus;
  std::vector<GpuPair> pairs;
  Host host;
  std::optional<Torch> torch;
  // The variables that steer the plan, as they were when sensed
  // (CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, LOCAL_RANK, and every
  // variable a rule may set). Only these names: no secrets in snapshots.
  std::map<std::string, std::string> env;
  // The values the container image's base gave those same variables, as
  // gpuenv's image recorded them when it was built (NGC sets
  // TORCH_CUDA_ARCH_LIST to every arch it built): a value equal to the base's
  // is the image's, not the user's. Empty outside gpuenv's image.
  std::map<std::string, std::string> base_image_env;
  // The latest stored figures of `gpuenv bench` / `gpuenv check` for this
  // machine (store/), read while sensing; empty when never measured.
  std::vector<Measurement> measurements;
  friend bool operator==(const Machine&, const Machine&) = default;
};

}  // namespace gpuenv

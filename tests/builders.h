// Builders for Machines in tests: machine::h100(8).with_nvlink() instead of
// hand-written JSON. Values mirror what NVML reports on those products.
#pragma once

#include <string>
#include <vector>

#include "model/machine.h"

namespace gpuenv::testing {

/// One GPU model: what a builder copies into each Gpu it adds.
struct GpuModel {
  std::string name;
  ComputeCapability cc;
  std::uint64_t memory_bytes;
  int pcie_gen_max;
  int pcie_width_max;
  std::uint32_t power_limit_mw;
  std::uint32_t max_sm_clock_mhz;
  std::uint32_t max_memory_clock_mhz;
  int nvlinks;  // active links when NVLink is on; 0 for PCIe-only parts
};

namespace models {
GpuModel gtx1080();
GpuModel v100();
GpuModel t4();
GpuModel a10();
GpuModel a100_80gb();
GpuModel rtx3090();
GpuModel rtx4090();
GpuModel l4();
GpuModel h100();
GpuModel h200();
GpuModel b200();
GpuModel rtx5090();
GpuModel jetson_orin();
}  // namespace models

/// Fluent builder. Host defaults: 2 sockets x 16 cores (32 CPUs), no
/// container, 64 GiB /dev/shm, lo + eth0, no InfiniBand, driver 580 (CUDA 13.0).
class MachineBuilder {
 public:
  MachineBuilder();
  /// Adds n GPUs of a model; their NUMA node alternates by halves across
  /// the host's sockets (first half on node 0, second half on node 1).
  MachineBuilder& gpus(const GpuModel& model, int n = 1);
  /// Connects every pair of GPUs through NVLink (NVSwitch-style: each pair
  /// reports p2p ok and topology "internal"/nvlink ok).
  MachineBuilder& with_nvlink();
  /// Every pair: PCIe P2P with the given status and topology level.
  MachineBuilder& with_pcie_p2p(const std::string& status = "ok",
                                const std::string& topology = "hostbridge");
  /// Puts GPU `index` in MIG mode with `n` instances named `profile`.
  MachineBuilder& with_mig(int index, int n, const std::string& profile,
                           std::uint64_t memory_bytes);
  MachineBuilder& cpus(int sockets, int cores_per_socket);
  /// SMT: each core runs `threads` logical CPUs, numbered as Linux does
  /// (core c's siblings are c, c + cores, ...), and Host::cpu_cores is
  /// known. Without it the cores are not sensed (nullopt).
  MachineBuilder& smt(int threads);
  MachineBuilder& cgroup_quota(double cpus);
  MachineBuilder& shm(std::uint64_t bytes);
  MachineBuilder& container(const std::string& kind);
  MachineBuilder& infiniband(const std::string& name = "mlx5_0",
                             const std::string& link_layer = "InfiniBand");
  MachineBuilder& interface(const std::string& name, bool up = true, bool loopback = false,
                            bool virtual_device = false);
  MachineBuilder& env(const std::string& name, const std::string& value);
  MachineBuilder& torch(const std::string& version, const std::string& cuda = "");
  MachineBuilder& driver(const std::string& version, int cuda_version);
  /// As sensed through the CUDA driver alone (Jetson: no NVML): only name,
  /// UUID, cc, memory and SM count are known.
  MachineBuilder& cuda_only(int multiprocessors);
  MachineBuilder& no_nvml(const std::string& code = "nvml_library_not_found");
  Machine build() const;
  operator Machine() const { return build(); }

 private:
  void layout_numa();
  Machine m_;
  std::vector<int> nvlinks_;  // per GPU: links the model has
  int sockets_ = 2;
  int cores_per_socket_ = 16;
  int threads_per_core_ = 0;  // 0: cores not sensed; else SMT threads per core
};

namespace machine {
MachineBuilder none();  // a host without NVIDIA software
MachineBuilder gtx1080();
MachineBuilder v100();
MachineBuilder t4();
MachineBuilder a10();
MachineBuilder a100_nvlink_8();   // 8x A100 80GB, NVLink, two sockets
MachineBuilder a100_mig();        // 1x A100 80GB, MIG 3x 2g.20gb
MachineBuilder a100_mig_mixed();  // 2x A100 80GB in MIG mode: 2x 3g.40gb, and 1x 7g.80gb
MachineBuilder rtx3090_4090();    // mixed consumer box
MachineBuilder l4();
MachineBuilder h100(int n = 1);
MachineBuilder h200(int n = 1);
MachineBuilder b200(int n = 1);
MachineBuilder rtx5090();
MachineBuilder jetson_orin();     // Tegra: no NVML, sensed through CUDA
}  // namespace machine

/// The named fixtures under tests/machines/ (name -> builder); the fixture
/// test checks each committed file equals its builder's output.
struct Fixture {
  const char* name;
  MachineBuilder (*make)();
};
const std::vector<Fixture>& fixtures();

}  // namespace gpuenv::testing

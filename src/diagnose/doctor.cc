#include "diagnose/doctor.h"

namespace gpuenv {

const char* status_name(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kWarning: return "warning";
    case Status::kError: return "error";
  }
  return "error";
}

Finding ok(std::string seen) { return {"", Status::kOk, std::move(seen), ""}; }
Finding warning(std::string seen, std::string fix) {
  return {"", Status::kWarning, std::move(seen), std::move(fix)};
}
Finding error(std::string seen, std::string fix) {
  return {"", Status::kError, std::move(seen), std::move(fix)};
}

const std::vector<Check>& all_checks() {
  static const std::vector<Check> kChecks = {
      {"nvml", "NVML loads and sees the GPUs", check_nvml},
      {"device_nodes", "/dev/nvidiactl and /dev/nvidia-uvm exist", check_device_nodes},
      {"cuda_init", "the CUDA driver initialises (cuInit)", check_cuda_init},
      {"container", "the container was given GPUs and the compute capability", check_container},
      {"visible_devices", "CUDA_VISIBLE_DEVICES is valid and leaves a GPU", check_visible_devices},
      {"torch", "a CUDA build of PyTorch is installed", check_torch},
      {"driver_compat", "the driver supports torch's CUDA version", check_driver_compat},
      {"kernels", "torch carries kernels for every GPU", check_kernels},
      {"extensions", "other CUDA libraries carry kernels for every GPU", check_extensions},
      {"bytecode", "torch's Python is compiled once, not at every start", check_bytecode},
      {"shm", "/dev/shm is large enough for DataLoader workers", check_shm},
      {"memlock", "locked memory for NCCL over InfiniBand", check_memlock},
      {"persistence", "persistence mode keeps the driver initialised", check_persistence},
      {"compute_mode", "no GPU is in the Prohibited compute mode", check_compute_mode},
      {"memory_in_use", "no other process holds much of a GPU's memory", check_memory_in_use},
      {"memory_errors", "no uncorrectable ECC errors or pending remaps", check_memory_errors},
      {"clocks", "no thermal or hardware slowdown", check_clocks},
      {"pcie", "PCIe links at their full width and generation", check_pcie},
      {"p2p", "peer-to-peer works where the topology allows it", check_p2p},
      {"fabric", "the NVLink fabric (Fabric Manager) is up", check_fabric},
      {"local_rank", "LOCAL_RANK indexes a GPU the process sees", check_local_rank},
      {"profiling", "the exporter's DCGM_FI_PROF_* fields have a source on every GPU", check_profiling},
  };
  return kChecks;
}

std::vector<Finding> diagnose(const Machine& m, const Options& o) {
  std::vector<Finding> out;
  for (const Check& c : all_checks())
    for (Finding f : c.fn(m, o)) {
      f.check = c.name;
      out.push_back(std::move(f));
    }
  return out;
}

Status worst(const std::vector<Finding>& findings) {
  Status s = Status::kOk;
  for (const auto& f : findings)
    if (f.status > s) s = f.status;
  return s;
}

}  // namespace gpuenv

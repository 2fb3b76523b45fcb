// Each check over a table of machines: one row that makes it fire, one that
// keeps it quiet (ok or silent), compared both ways: the exact number of
// findings, each one's status and a fragment of what it says.
#include "diagnose/doctor.h"

#include <gtest/gtest.h>

#include <functional>

#include "builders.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;

struct Expect {
  Status status;
  std::string fragment;  // in seen or fix
};

struct Row {
  std::string description;
  CheckFn check;
  Machine machine;
  Env env;
  std::vector<Expect> expected;
};

Machine with(Machine m, const std::function<void(Machine&)>& edit) {
  edit(m);
  return m;
}

Machine nodes(Machine m) {
  m.host.nvidia_device_nodes = {"/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"};
  return m;
}

Torch torch(const std::string& version, std::optional<std::string> cuda) {
  Torch t;
  t.version = version;
  t.cuda_version = std::move(cuda);
  t.path = "/venv/lib/python3.12/site-packages/torch";
  return t;
}

CudaBinary binary(std::vector<std::string> targets, std::string package = "torch") {
  return {"/venv/lib/python3.12/site-packages/" + package + "/lib/x.so", package,
          std::move(targets), std::nullopt, std::nullopt};
}

Machine h200_torch(std::vector<std::string> targets) {
  return with(machine::h200(1), [&](Machine& m) {
    m.torch = torch("2.11.0+cu130", "13.0");
    m.torch->libtorch_cuda = binary(std::move(targets));
  });
}

std::vector<Row> driver_rows() {
  return {
      {"nvml: no library", check_nvml, machine::none(), {}, {{Status::kError, "libnvidia-ml.so.1"}}},
      {"nvml: a GPU fell off the bus", check_nvml,
       with(machine::h100(2),
            [](Machine& m) {
              m.gpus[1].problem =
                  Problem{"nvml", "nvml_gpu_lost", "nvmlDeviceGetMemoryInfo: GPU is lost", "reboot"};
            }),
       {}, {{Status::kError, "GPU 1 (NVIDIA H100"}}},
      {"nvml: healthy", check_nvml, machine::h200(2), {}, {{Status::kOk, "NVML sees 2 GPUs"}}},
      {"profiling: an A100 without DCGM", check_profiling, machine::a100_nvlink_8(), {},
       {{Status::kOk, "DCGM_FI_PROF_*: NVML GPM needs Hopper or newer; install DCGM (libdcgm.so.4) to serve them "
                      "on this A100"}}},
      {"profiling: an A100 with DCGM", check_profiling,
       with(machine::a100_nvlink_8(), [](Machine& m) { m.nvidia.dcgm_library = "libdcgm.so.4"; }), {},
       {{Status::kOk, "reads them from DCGM (libdcgm.so.4) on this A100"}}},
      {"profiling: Hopper has GPM", check_profiling, machine::h200(2), {}, {}},
      {"device nodes: no nvidia-uvm", check_device_nodes,
       with(machine::h200(1), [](Machine& m) { m.host.nvidia_device_nodes = {"/dev/nvidiactl"}; }),
       {}, {{Status::kError, "/dev/nvidia-uvm is missing"}}},
      {"device nodes: in a container the toolkit adds them", check_device_nodes,
       with(machine::h200(1), [](Machine& m) { m.host.container = "docker"; }), {},
       {{Status::kError, "--gpus all"}}},
      {"device nodes: present", check_device_nodes, nodes(machine::h200(1)), {},
       {{Status::kOk, "exist"}}},
      {"device nodes: no GPU, no nodes: silent", check_device_nodes, machine::none(), {}, {}},
      {"cuda: error 802 without Fabric Manager", check_cuda_init,
       with(machine::h100(8),
            [](Machine& m) {
              m.nvidia.cuda_init_result = 802;
              m.nvidia.problems.push_back({"cuda", "cuda_system_not_ready",
                                           "cuInit failed: the system is not yet initialized",
                                           "sudo systemctl enable --now nvidia-fabricmanager"});
            }),
       {}, {{Status::kError, "nvidia-fabricmanager"}}},
      {"cuda: initialised", check_cuda_init,
       with(machine::h200(1), [](Machine& m) { m.nvidia.cuda_init_result = 0; }), {},
       {{Status::kOk, "cuInit succeeded"}}},
      {"cuda: not tried: silent", check_cuda_init, machine::h200(1), {}, {}},
      {"container: capabilities lack compute", check_container,
       with(machine::h200(1), [](Machine& m) { m.host.container = "docker"; }),
       {{"NVIDIA_DRIVER_CAPABILITIES", "utility"}}, {{Status::kError, "lacks compute"}}},
      {"container: NVIDIA_VISIBLE_DEVICES=void", check_container, machine::h200(1),
       {{"NVIDIA_VISIBLE_DEVICES", "void"}}, {{Status::kError, "no GPU"}}},
      {"container: started without GPUs", check_container,
       with(machine::none(), [](Machine& m) { m.host.container = "docker"; }), {},
       {{Status::kError, "started without GPUs"}}},
      {"container: all given", check_container,
       with(machine::h200(1), [](Machine& m) { m.host.container = "docker"; }),
       {{"NVIDIA_DRIVER_CAPABILITIES", "compute,utility"}, {"NVIDIA_VISIBLE_DEVICES", "all"}},
       {{Status::kOk, "passed 1 GPU through"}}},
      {"container: bare metal: silent", check_container, machine::h200(1), {}, {}},
      {"CUDA_VISIBLE_DEVICES hides every GPU", check_visible_devices, machine::h200(2),
       {{"CUDA_VISIBLE_DEVICES", ""}}, {{Status::kError, "hides every GPU"}}},
      {"CUDA_VISIBLE_DEVICES out of range", check_visible_devices, machine::h200(2),
       {{"CUDA_VISIBLE_DEVICES", "5"}}, {{Status::kError, "hides every GPU"}}},
      {"CUDA_VISIBLE_DEVICES picks one", check_visible_devices, machine::h200(2),
       {{"CUDA_VISIBLE_DEVICES", "1"}}, {{Status::kOk, "selects 1 device"}}},
      {"CUDA_VISIBLE_DEVICES unset: silent", check_visible_devices, machine::h200(2), {}, {}},
  };
}

std::vector<Row> torch_rows() {
  // flash-attn's extension, installed by pip, built for sm_80 only.
  Machine flash_attn_sm80 = with(h200_torch({"sm_90"}), [](Machine& m) {
    CudaBinary b = binary({"sm_80"}, "flash_attn_2_cuda");
    b.distribution = "flash_attn";
    m.torch->extensions = {b};
  });
  return {
      {"torch: none found", check_torch, machine::h200(1), {},
       {{Status::kWarning, "no PyTorch found"}}},
      {"torch: a CPU build on a GPU machine", check_torch,
       with(machine::h200(1), [](Machine& m) { m.torch = torch("2.11.0+cpu", std::nullopt); }), {},
       {{Status::kError, "CPU-only build"}}},
      {"torch: the fix names the wheel this driver runs", check_torch,
       with(machine::h200(1),
            [](Machine& m) {
              m.torch = torch("2.11.0+cpu", std::nullopt);
              m.nvidia.driver_version = "570.124.06";
              m.nvidia.cuda_driver_version = 12080;
            }),
       {}, {{Status::kError, "pip install --force-reinstall torch==2.11.0 --index-url "
                             "https://download.pytorch.org/whl/cu128"}}},
      {"torch: CUDA build", check_torch,
       with(machine::h200(1), [](Machine& m) { m.torch = torch("2.11.0+cu130", "13.0"); }), {},
       {{Status::kOk, "torch 2.11.0+cu130 (CUDA 13.0)"}}},
      {"torch: no GPU: silent", check_torch, machine::none(), {}, {}},
      {"driver: cu130 on driver 570 is an error", check_driver_compat,
       with(machine::h200(1),
            [](Machine& m) {
              m.torch = torch("2.11.0+cu130", "13.0");
              m.nvidia.driver_version = "570.124.06";
              m.nvidia.cuda_driver_version = 12080;
            }),
       {}, {{Status::kError, "580.65.06 or newer, or install torch 2.11.0+cu128: pip install "
                             "--force-reinstall torch==2.11.0 --index-url "
                             "https://download.pytorch.org/whl/cu128"}}},
      {"driver: cu130 on a V100 names the CUDA 12 build, not a driver upgrade", check_driver_compat,
       with(machine::v100(),
            [](Machine& m) {
              m.torch = torch("2.12.0+cu130", "13.0");
              m.nvidia.driver_version = "535.183.01";
              m.nvidia.cuda_driver_version = 12020;
            }),
       {}, {{Status::kError, "a driver upgrade would not make it run"}}},
      {"driver: cu128 on driver 550 runs by minor-version compatibility", check_driver_compat,
       with(machine::h100(1),
            [](Machine& m) {
              m.torch = torch("2.9.0+cu128", "12.8");
              m.nvidia.driver_version = "550.54.15";
              m.nvidia.cuda_driver_version = 12040;
            }),
       {}, {{Status::kWarning, "minor-version compatibility"}}},
      {"driver: new enough", check_driver_compat,
       with(machine::h200(1), [](Machine& m) { m.torch = torch("2.11.0+cu130", "13.0"); }), {},
       {{Status::kOk, "supports CUDA 13.0"}}},
      {"kernels: sm_90 runs natively on the H200", check_kernels,
       h200_torch({"compute_120", "sm_100", "sm_120", "sm_75", "sm_80", "sm_86", "sm_90"}), {},
       {{Status::kOk, "runs natively on NVIDIA H200 (Hopper, 9.0): its sm_90 cubins"}}},
      {"kernels: only PTX for a newer GPU", check_kernels,
       with(machine::rtx5090(),
            [](Machine& m) {
              m.torch = torch("2.6.0+cu124", "12.4");
              m.torch->libtorch_cuda = binary({"compute_90", "sm_80", "sm_90"});
            }),
       {}, {{Status::kWarning, "JIT-compiles the compute_90 PTX"}}},
      {"kernels: no kernel image", check_kernels,
       with(machine::rtx5090(),
            [](Machine& m) {
              m.torch = torch("2.6.0+cu124", "12.4");
              m.torch->libtorch_cuda = binary({"sm_80", "sm_90"});
            }),
       {}, {{Status::kError, "no kernel image is available"}}},
      {"kernels: cu130 dropped Volta", check_kernels,
       with(machine::v100(),
            [](Machine& m) {
              m.torch = torch("2.11.0+cu130", "13.0");
              m.torch->libtorch_cuda = binary({"sm_75", "sm_80", "sm_90", "compute_120"});
            }),
       {}, {{Status::kError, "torch==2.11.0 --index-url https://download.pytorch.org/whl/cu126"}}},
      {"kernels: not read: silent", check_kernels, machine::h200(1), {}, {}},
      {"extensions: one without code for this GPU", check_extensions,
       with(h200_torch({"sm_90"}),
            [](Machine& m) {
              m.torch->extensions = {binary({"sm_80"}, "flash_attn"), binary({"sm_90"}, "xformers")};
            }),
       {},
       {{Status::kOk, "1 other CUDA library in site-packages runs natively on every visible GPU "
                      "(xformers)"},
        {Status::kError, "flash_attn (x.so)"}}},
      {"extensions: named by the pip distribution a RECORD gives", check_extensions,
       flash_attn_sm80, {},
       {{Status::kError, "flash_attn (x.so) carries sm_80: nothing runs on NVIDIA H200 (Hopper, 9.0)"
                         " (\"no kernel image is available\") | reinstall flash_attn in a build"}}},
      {"extensions: the from-source command names the distribution", check_extensions,
       flash_attn_sm80, {},
       {{Status::kError, "`gpuenv run -- pip install --force-reinstall --no-build-isolation "
                         "--no-binary flash_attn flash_attn`"}}},
      {"extensions: unreadable", check_extensions,
       with(h200_torch({"sm_90"}),
            [](Machine& m) {
              CudaBinary b = binary({}, "bitsandbytes");
              b.error = "offset 0x40: truncated";
              m.torch->extensions = {b};
            }),
       {}, {{Status::kWarning, "truncated"}}},
      {"extensions: NVIDIA's own libraries are not judged by their fatbins", check_extensions,
       with(h200_torch({"sm_90"}),
            [](Machine& m) { m.torch->extensions = {binary({"sm_75"}, "nvidia")}; }),
       {}, {}},
      {"extensions: all native", check_extensions,
       with(h200_torch({"sm_90"}),
            [](Machine& m) { m.torch->extensions = {binary({"sm_90a"}, "vllm")}; }),
       {}, {{Status::kOk, "1 other CUDA library"}}},
  };
}

std::vector<Row> host_rows() {
  return {
      {"shm: Docker's 64 MB", check_shm,
       with(machine::h200(1),
            [](Machine& m) {
              m.host.shm_bytes = 64ull << 20;
              m.host.container = "docker";
            }),
       {}, {{Status::kWarning, "--shm-size"}}},
      {"shm: 512 MB on Kubernetes", check_shm,
       with(machine::h200(1),
            [](Machine& m) {
              m.host.shm_bytes = 512ull << 20;
              m.host.container = "kubernetes";
            }),
       {}, {{Status::kWarning, "emptyDir"}}},
      {"shm: large", check_shm, machine::h200(1), {}, {{Status::kOk, "/dev/shm is 64 GiB"}}},
      {"shm: read-only in Docker, however large", check_shm,
       with(machine::h200(1),
            [](Machine& m) {
              m.host.container = "docker";
              m.host.shm_writable = false;
              m.host.shm_error = "create a file in /dev/shm: Read-only file system";
            }),
       {}, {{Status::kError, "--shm-size=16g"}}},
      {"shm: a plain file on the host", check_shm,
       with(machine::h200(1),
            [](Machine& m) {
              m.host.shm_writable = false;
              m.host.shm_error = "create a file in /dev/shm: Not a directory";
            }),
       {}, {{Status::kError, "/dev/shm is unusable (create a file in /dev/shm: Not a directory)"}}},
      {"shm: writable and large", check_shm,
       with(machine::h200(1), [](Machine& m) { m.host.shm_writable = true; }), {},
       {{Status::kOk, "/dev/shm is 64 GiB"}}},
      {"memlock: 8 MiB with InfiniBand", check_memlock,
       with(machine::h100(8).infiniband(), [](Machine& m) { m.host.memlock_bytes = 8ull << 20; }),
       {}, {{Status::kWarning, "memlock"}}},
      {"memlock: unlimited", check_memlock,
       with(machine::h100(8).infiniband(), [](Machine& m) { m.host.memlock_bytes = UINT64_MAX; }),
       {}, {{Status::kOk, "unlimited"}}},
      {"memlock: no InfiniBand: silent", check_memlock,
       with(machine::h100(1), [](Machine& m) { m.host.memlock_bytes = 8ull << 20; }), {}, {}},
      {"bytecode: the image forbids it", check_bytecode,
       with(machine::h200(1),
            [](Machine& m) {
              m.torch = torch("2.11.0+cu130", "13.0");
              m.torch->bytecode_cached = false;
            }),
       {{"PYTHONDONTWRITEBYTECODE", "1"}}, {{Status::kWarning, "PYTHONDONTWRITEBYTECODE=1"}}},
      {"bytecode: under gpuenv run", check_bytecode,
       with(machine::h200(1),
            [](Machine& m) {
              m.torch = torch("2.11.0+cu130", "13.0");
              m.torch->bytecode_cached = false;
            }),
       {{"PYTHONPYCACHEPREFIX", "/c/python"}, {"PYTHONDONTWRITEBYTECODE", ""}},
       {{Status::kOk, "PYTHONPYCACHEPREFIX=/c/python"}}},
  };
}

std::vector<Row> health_rows() {
  Machine busy_gpu_1 = with(machine::h200(2), [](Machine& m) {
    m.gpus[1].memory_free_bytes = *m.gpus[1].memory_total_bytes - (70ull << 30);
  });
  Machine prohibited_1_3 = with(machine::a100_nvlink_8(), [](Machine& m) {
    m.gpus[1].compute_mode = "prohibited";
    m.gpus[3].compute_mode = "prohibited";
  });
  return {
      {"persistence off", check_persistence,
       with(machine::h200(2), [](Machine& m) { m.gpus[1].persistence_mode = false; }), {},
       {{Status::kWarning, "off on GPU 1"}}},
      {"persistence on", check_persistence, machine::h200(2), {}, {{Status::kOk, "is on"}}},
      {"compute mode prohibited", check_compute_mode, prohibited_1_3, {},
       {{Status::kError, "GPUs 1 and 3 are in the Prohibited compute mode"}}},
      {"compute mode prohibited: a fix per GPU", check_compute_mode, prohibited_1_3, {},
       {{Status::kError, "`sudo nvidia-smi -i 1 -c DEFAULT`; `sudo nvidia-smi -i 3 -c DEFAULT`"}}},
      {"compute mode exclusive is said, not warned about", check_compute_mode,
       with(machine::h100(2), [](Machine& m) { m.gpus[0].compute_mode = "exclusive_process"; }), {},
       {{Status::kOk, "GPU 0 is in an Exclusive compute mode"}}},
      {"compute mode default", check_compute_mode, machine::h200(2), {},
       {{Status::kOk, "is Default"}}},
      {"memory in use by another process", check_memory_in_use, busy_gpu_1, {},
       {{Status::kWarning, "GPU 1 (NVIDIA H200) has 70 GiB of its 140.4 GiB in use by other "
                           "processes: torch can allocate only the 70.4 GiB left"}}},
      {"memory in use on a GPU CUDA_VISIBLE_DEVICES hides", check_memory_in_use, busy_gpu_1,
       {{"CUDA_VISIBLE_DEVICES", "0"}}, {{Status::kOk, "no GPU has a tenth"}}},
      {"memory in use: a MIG GPU's is its MIG devices'", check_memory_in_use,
       with(machine::a100_mig(),
            [](Machine& m) { m.gpus[0].memory_free_bytes = *m.gpus[0].memory_total_bytes / 2; }),
       {}, {}},
      {"memory in use: little", check_memory_in_use, machine::h200(2), {},
       {{Status::kOk, "no GPU has a tenth of its memory or more in use"}}},
      {"ECC: uncorrectable errors, remap pending", check_memory_errors,
       with(machine::h100(2),
            [](Machine& m) {
              m.gpus[0].health.ecc_uncorrected = 2;
              m.gpus[0].health.row_remap_pending = true;
              m.gpus[1].health.ecc_uncorrected = 0;
            }),
       {}, {{Status::kError, "2 uncorrectable ECC"}, {Status::kWarning, "nvidia-smi -r -i 0"}}},
      {"ECC: remap failed", check_memory_errors,
       with(machine::h100(1), [](Machine& m) { m.gpus[0].health.row_remap_failure = true; m.gpus[0].health.row_remap_pending = false; }),
       {}, {{Status::kError, "RMA"}}},
      {"ECC: pre-Ampere retired pages pending", check_memory_errors,
       with(machine::v100(), [](Machine& m) { m.gpus[0].retired_pages_pending = true; }), {},
       {{Status::kWarning, "retired memory pages"}}},
      {"ECC: clean", check_memory_errors,
       with(machine::h100(1),
            [](Machine& m) {
              m.gpus[0].health.ecc_uncorrected = 0;
              m.gpus[0].health.row_remap_pending = false;
            }),
       {}, {{Status::kOk, "no uncorrectable"}}},
      {"ECC: not read: silent", check_memory_errors, machine::h100(1), {}, {}},
      {"clocks: thermal slowdown", check_clocks,
       with(machine::h200(1),
            [](Machine& m) {
              m.gpus[0].health.clock_events = 0x40 | 0x8;
              m.gpus[0].health.temperature_c = 91;
            }),
       {}, {{Status::kError, "thermal slowdown at 91 C"}}},
      {"clocks: software thermal slowdown warns", check_clocks,
       with(machine::h200(1), [](Machine& m) { m.gpus[0].health.clock_events = 0x20; }), {},
       {{Status::kWarning, "thermal slowdown"}}},
      {"clocks: idle, power capped: fine", check_clocks,
       with(machine::h200(1), [](Machine& m) { m.gpus[0].health.clock_events = 0x1 | 0x4; }), {},
       {{Status::kOk, "no thermal"}}},
      {"pcie: half width", check_pcie,
       with(machine::h200(1), [](Machine& m) { m.gpus[0].pcie.width_current = 8; }), {},
       {{Status::kWarning, "x8 of x16"}}},
      {"pcie: gen 1 while busy", check_pcie,
       with(machine::h200(1),
            [](Machine& m) {
              m.gpus[0].pcie.gen_current = 1;
              m.gpus[0].health.clock_events = 0;
            }),
       {}, {{Status::kWarning, "gen 1 of gen 5 while busy"}}},
      {"pcie: gen 1 while idle is normal", check_pcie,
       with(machine::h200(1),
            [](Machine& m) {
              m.gpus[0].pcie.gen_current = 1;
              m.gpus[0].health.clock_events = 0x1;
            }),
       {}, {{Status::kOk, "full width"}}},
  };
}

std::vector<Row> multigpu_rows() {
  return {
      {"p2p: blocked under one switch", check_p2p,
       machine::h100(2).with_pcie_p2p("chipset_not_supported", "single"), {},
       {{Status::kWarning, "ACS or the IOMMU"}}},
      {"p2p: across sockets it is expected", check_p2p,
       machine::h100(2).with_pcie_p2p("chipset_not_supported", "system"), {},
       {{Status::kOk, "1 pair"}}},
      {"p2p: a blanket NCCL_P2P_DISABLE", check_p2p, machine::h100(2).with_nvlink(),
       {{"NCCL_P2P_DISABLE", "1"}}, {{Status::kWarning, "unset NCCL_P2P_DISABLE"}}},
      {"p2p: NVLink", check_p2p, machine::h100(2).with_nvlink(), {}, {{Status::kOk, "P2P works"}}},
      {"fabric: Fabric Manager not started", check_fabric,
       with(machine::h100(2),
            [](Machine& m) {
              for (auto& g : m.gpus) g.fabric_state = "not_started";
            }),
       {}, {{Status::kError, "nvidia-fabricmanager"}, {Status::kError, "GPU 1 (NVIDIA H100"}}},
      {"fabric: registration failed", check_fabric,
       with(machine::h100(1),
            [](Machine& m) {
              m.gpus[0].fabric_state = "completed";
              m.gpus[0].fabric_status = 999;
            }),
       {}, {{Status::kError, "failed its NVLink fabric registration"}}},
      {"fabric: up", check_fabric,
       with(machine::h100(2),
            [](Machine& m) {
              for (auto& g : m.gpus) {
                g.fabric_state = "completed";
                g.fabric_status = 0;
              }
            }),
       {}, {{Status::kOk, "up on 2 GPUs"}}},
      {"fabric: PCIe GPU: silent", check_fabric,
       with(machine::l4(), [](Machine& m) { m.gpus[0].fabric_state = "not_supported"; }), {}, {}},
      {"local_rank: Slurm bound one GPU per task, SLURM_LOCALID=1", check_local_rank, machine::h100(8),
       {{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "2"},
        {"CUDA_VISIBLE_DEVICES", "1"}, {"SLURM_STEP_GPUS", "1"}},
       {{Status::kWarning, "torch.cuda.set_device(LOCAL_RANK) fails"}}},
      {"local_rank: torchrun's LOCAL_RANK=3 with every GPU visible: silent", check_local_rank, machine::h100(8),
       {{"LOCAL_RANK", "3"}, {"LOCAL_WORLD_SIZE", "8"}}, {}},
      {"local_rank: LOCAL_RANK=2 but only two GPUs visible", check_local_rank, machine::h100(8),
       {{"LOCAL_RANK", "2"}, {"CUDA_VISIBLE_DEVICES", "0,1"}}, {{Status::kWarning, "sees 2 GPUs"}}},
  };
}

// The whole fix for a CPU-only torch 2.11.0, by GPU and driver: the newest
// 2.11 build both allow (decide/wheels.h, docs/wheels.md).
TEST(Doctor, TorchFixNamesTheNewestBuildBothAllow) {
  const std::string pip = "pip install --force-reinstall torch==2.11.0 --index-url "
                          "https://download.pytorch.org/whl/";
  auto driver = [](MachineBuilder b, std::optional<std::string> version, std::optional<int> cuda) {
    Machine m = b;
    m.nvidia.driver_version = std::move(version);
    m.nvidia.cuda_driver_version = cuda;
    m.torch = torch("2.11.0+cpu", std::nullopt);
    return m;
  };
  struct Case {
    std::string description;
    Machine machine;
    std::string fix;
  } cases[] = {
      {"H100, driver 535: no build under CUDA 12.2, so the least beyond it, by minor-version "
       "compatibility", driver(machine::h100(), "535.183.01", 12020), pip + "cu126"},
      {"H100, driver 550", driver(machine::h100(), "550.54.15", 12040), pip + "cu126"},
      {"H100, driver 570 (CUDA 12.8): cu128", driver(machine::h100(), "570.124.06", 12080),
       pip + "cu128"},
      {"H100, driver 525.60.13 exactly", driver(machine::h100(), "525.60.13", 12000),
       pip + "cu126"},
      {"H200, driver 580.65.06: cu130", driver(machine::h200(), "580.65.06", 13000),
       pip + "cu130"},
      {"B200, driver 590", driver(machine::b200(), "590.44.01", 13010), pip + "cu130"},
      {"GTX 1080 (Pascal), driver 535: only cu126 carries sm_60",
       driver(machine::gtx1080(), "535.183.01", 12020), pip + "cu126"},
      {"GTX 1080, driver 580: still cu126", driver(machine::gtx1080(), "580.95.05", 13000),
       pip + "cu126"},
      {"V100, driver 580: CUDA 13 dropped Volta, and 2.11's cu128 too", driver(machine::v100(), "580.95.05", 13000),
       pip + "cu126"},
      {"Volta + Pascal: cu126", driver(MachineBuilder().gpus(models::v100()).gpus(models::gtx1080()),
                                       "580.95.05", 13000),
       pip + "cu126"},
      {"driver version unknown, CUDA 12.2 reported", driver(machine::h100(), std::nullopt, 12020),
       pip + "cu126"},
      {"nothing known of the driver: the newest", driver(machine::h100(), std::nullopt, std::nullopt),
       pip + "cu130"},
      {"H100, driver 470: the GA driver of the least CUDA line, then that build",
       driver(machine::h100(), "470.256.02", 11040),
       "upgrade the NVIDIA driver to 560.28.03 or newer, then " + pip + "cu126"},
      {"Kepler: no build", driver(MachineBuilder().gpus(GpuModel{"Tesla K80", {3, 7}, 12ull << 30,
                                                                  3, 16, 150000, 875, 2505, 0}),
                                  "470.256.02", 11040),
       "no official torch 2.14.0 build carries code for this GPU: build PyTorch from source with "
       "TORCH_CUDA_ARCH_LIST=\"3.7\""},
      {"Jetson Orin: not an x86_64 wheel", driver(machine::jetson_orin(), "540.4.0", 12060),
       "on a Jetson or DRIVE board PyTorch's x86_64 wheels do not apply: install the torch build "
       "NVIDIA publishes for its JetPack release"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.description);
    std::vector<Finding> got = check_torch(c.machine, options_for(c.machine));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].fix, c.fix);
  }
}

// No torch at all: the newest release's builds (2.14.0).
TEST(Doctor, TorchFixWithoutTorchNamesTheNewestRelease) {
  auto no_torch = [](MachineBuilder b, const char* version, int cuda) {
    Machine m = b.driver(version, cuda);
    m.torch.reset();
    return m;
  };
  const std::string pip = "pip install --force-reinstall torch==2.14.0 --index-url "
                          "https://download.pytorch.org/whl/";
  struct Case {
    const char* what;
    Machine machine;
    std::string fix;
  } cases[] = {
      {"H200, driver 580 (CUDA 13.0): cu130, not cu132", no_torch(machine::h200(), "580.95.05", 13000),
       pip + "cu130"},
      {"H200, driver 595 (CUDA 13.2): cu132", no_torch(machine::h200(), "595.45.04", 13020), pip + "cu132"},
      {"H100, driver 550: cu126 (2.14 has no cu128)", no_torch(machine::h100(), "550.54.15", 12040),
       pip + "cu126"},
      {"V100, driver 580: cu126", no_torch(machine::v100(), "580.95.05", 13000), pip + "cu126"},
      {"B200, driver 550: 2.14's Blackwell builds are CUDA 13: CUDA 13.0's GA driver, then cu130",
       no_torch(machine::b200(), "550.54.15", 12040),
       "upgrade the NVIDIA driver to 580.65.06 or newer, then " + pip + "cu130"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<Finding> got = check_torch(c.machine, options_for(c.machine));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_NE(got[0].fix.find(c.fix), std::string::npos) << got[0].fix;
  }
}

void run_rows(const std::vector<Row>& rows) {
  for (const auto& row : rows) {
    SCOPED_TRACE(row.description);
    std::vector<Finding> got = row.check(row.machine, options_for(row.machine, row.env));
    ASSERT_EQ(got.size(), row.expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].status, row.expected[i].status) << got[i].seen;
      std::string text = got[i].seen + " | " + got[i].fix;
      EXPECT_NE(text.find(row.expected[i].fragment), std::string::npos) << text;
      EXPECT_EQ(got[i].fix.empty(), got[i].status == Status::kOk) << text;
      EXPECT_EQ(got[i].seen.find('\n'), std::string::npos);
    }
  }
}

TEST(Doctor, DriverChecks) { run_rows(driver_rows()); }
TEST(Doctor, TorchChecks) { run_rows(torch_rows()); }
TEST(Doctor, HostChecks) { run_rows(host_rows()); }
TEST(Doctor, HealthChecks) { run_rows(health_rows()); }
TEST(Doctor, MultiGpuChecks) { run_rows(multigpu_rows()); }

// Every registered check is covered by a row that makes it fire.
TEST(Doctor, EveryCheckHasAFiringRow) {
  std::vector<Row> all;
  for (auto rows : {driver_rows(), torch_rows(), host_rows(), health_rows(), multigpu_rows()})
    all.insert(all.end(), rows.begin(), rows.end());
  for (const Check& c : all_checks()) {
    if (std::string(c.name) == "profiling") continue;  // says, never warns: only the exporter misses the fields
    bool fires = false;
    for (const auto& r : all)
      if (r.check == c.fn)
        for (const auto& e : r.expected) fires = fires || e.status != Status::kOk;
    EXPECT_TRUE(fires) << c.name;
  }
}

TEST(Doctor, HealthyH200HasNoWarnings) {
  Machine m = nodes(h200_torch({"sm_90", "sm_100", "compute_120"}));
  m.nvidia.cuda_init_result = 0;
  m.torch->bytecode_cached = true;
  std::vector<Finding> all = diagnose(m, options_for(m));
  for (const auto& f : all) EXPECT_EQ(f.status, Status::kOk) << f.check << ": " << f.seen;
  EXPECT_EQ(worst(all), Status::kOk);
  for (const auto& f : all) EXPECT_FALSE(f.check.empty());
}

TEST(Doctor, WorstStatus) {
  EXPECT_EQ(worst({}), Status::kOk);
  EXPECT_EQ(worst({ok("a"), warning("b", "c")}), Status::kWarning);
  EXPECT_EQ(worst({error("a", "b"), warning("b", "c")}), Status::kError);
}

}  // namespace
}  // namespace gpuenv

// gpuenv doctor end to end: the real binary over the stand-in NVML and CUDA
// driver (tests/fake_nvml scenarios), a fake Python environment, and
// snapshots; exit codes 0 / 4 / 1 / 3 as README.md documents them.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "builders.h"
#include "model/snapshot.h"
#include "process.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv::testing {
namespace {

namespace stdfs = std::filesystem;
using nlohmann::json;



/// A venv whose torch carries the GPU code of `fatbin` (tests/fatbins/), or
/// is a CPU build when `fatbin` is empty. Returns its python3.
std::string fake_venv(const std::string& version, const std::string& cuda,
                      const std::string& fatbin) {
  std::string root = stdfs::path(write_temp_file("x", "")).parent_path().string() + "/venv";
  std::string site = root + "/lib/python3.12/site-packages";
  stdfs::create_directories(root + "/bin");
  stdfs::create_directories(site + "/torch/lib");
  stdfs::create_directories(site + "/torch/__pycache__");
  std::ofstream(root + "/pyvenv.cfg") << "home = /usr/bin\n";
  std::ofstream(root + "/bin/python3") << "#!/bin/sh\n";
  chmod((root + "/bin/python3").c_str(), 0755);
  std::ofstream(site + "/torch/__pycache__/__init__.cpython-312.pyc") << "x";
  std::ofstream(site + "/torch/version.py")
      << "__version__ = '" << version << "'\ncuda = " << (cuda.empty() ? "None" : "'" + cuda + "'")
      << "\n";
  if (!fatbin.empty())
    stdfs::copy_file(std::string((test_paths::tests_dir() + "/fatbins/")) + fatbin,
                     site + "/torch/lib/libtorch_cuda.so");
  return root + "/bin/python3";
}

json findings(const ProcessResult& r) {
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

/// The findings of one check, as "status: seen" lines.
std::vector<std::string> of(const json& j, const std::string& check) {
  std::vector<std::string> out;
  for (const auto& f : j["findings"])
    if (f["check"] == check) out.push_back(f["status"].get<std::string>() + ": " +
                                           f["seen"].get<std::string>());
  return out;
}

bool any_has(const std::vector<std::string>& lines, const std::string& fragment) {
  for (const auto& l : lines)
    if (l.find(fragment) != std::string::npos) return true;
  return false;
}

// Issue 27's two cases, as the binary reads them from the committed
// machines: a build of the user's own torch, and on Volta the CUDA 12 build
// in place of a driver upgrade that would not help.
using testing::contains;

std::string fix_of(const std::string& machine, const std::string& check) {
  ProcessResult r = run_gpuenv({"doctor", "--json", "--machine",
                                std::string((test_paths::tests_dir() + "/machines/")) + machine + ".json"});
  json j = findings(r);
  for (const auto& f : j["findings"])
    if (f["check"] == check)
      return f["status"].get<std::string>() + ": " + f["seen"].get<std::string>() + " | " +
             (f["fix"].is_string() ? f["fix"].get<std::string>() : "");
  return "no " + check + " finding in " + r.out;
}

TEST(DoctorCli, WheelAdviceKeepsTheUsersTorch) {
  std::string h100 = fix_of("h100-driver550-torch212-cu130", "driver_compat");
  EXPECT_TRUE(contains(h100, "error: torch 2.12.0+cu130 bundles CUDA 13.0; driver 550.54.15")) << h100;
  EXPECT_TRUE(contains(h100, "install torch 2.12.0+cu126: pip install --force-reinstall torch==2.12.0 "
                             "--index-url https://download.pytorch.org/whl/cu126")) << h100;
  EXPECT_FALSE(contains(h100, "2.9.1")) << h100;
  std::string v100 = fix_of("v100-driver535-torch212-cu130", "driver_compat");
  EXPECT_TRUE(contains(v100, "no CUDA 13.0 build of torch carries kernels for Tesla V100-SXM2-16GB (Volta, 7.0)")) << v100;
  EXPECT_TRUE(contains(v100, "a driver upgrade would not make it run")) << v100;
  EXPECT_TRUE(contains(v100, "| install a build of a CUDA line that still has them: pip install "
                             "--force-reinstall torch==2.12.0 --index-url "
                             "https://download.pytorch.org/whl/cu126")) << v100;
  EXPECT_FALSE(contains(v100, "upgrade the NVIDIA driver")) << v100;
}

TEST(DoctorCli, FourSickH100s) {
  ProcessOptions o = stand_ins("h100_sick_4");
  ProcessResult r = run_gpuenv({"doctor", "--json"}, o);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  json j = findings(r);
  EXPECT_EQ(j["status"], "error");
  auto clocks = of(j, "clocks");
  ASSERT_EQ(clocks.size(), 1u);
  EXPECT_TRUE(any_has(clocks, "error: GPU 0 (NVIDIA H100 80GB HBM3) is slowed by thermal"));
  auto mem = of(j, "memory_errors");
  EXPECT_TRUE(any_has(mem, "error: GPU 1 (NVIDIA H100 80GB HBM3) had 2 uncorrectable ECC"));
  EXPECT_TRUE(any_has(mem, "warning: GPU 2 (NVIDIA H100 80GB HBM3) has a memory row remapping"));
  EXPECT_TRUE(any_has(mem, "error: GPU 3 (NVIDIA H100 80GB HBM3) failed a memory row remapping"));
  auto fabric = of(j, "fabric");
  EXPECT_TRUE(any_has(fabric, "GPU 2 (NVIDIA H100 80GB HBM3) has not joined the NVLink fabric (in_progress)"));
  EXPECT_TRUE(any_has(fabric, "GPU 3 (NVIDIA H100 80GB HBM3) has not joined the NVLink fabric (not_started)"));
  EXPECT_TRUE(any_has(of(j, "memory_in_use"), "warning: GPU 0 (NVIDIA H100 80GB HBM3) has 39.8 GiB "
                                               "of its 79.6 GiB in use by other processes"));
  auto mode = of(j, "compute_mode");
  EXPECT_TRUE(any_has(mode, "error: GPU 3 is in the Prohibited compute mode")) << mode.size();
  for (const auto& f : j["findings"]) {
    if (f["check"] != "compute_mode") continue;
    EXPECT_NE(f["fix"].get<std::string>().find("sudo nvidia-smi -i 3 -c DEFAULT"), std::string::npos);
  }
}

TEST(DoctorCli, DriverNotLoaded) {
  ProcessResult r = run_gpuenv({"doctor", "--no-color"}, stand_ins("init_driver_not_loaded"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("error   nvml"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fix: "), std::string::npos) << r.out;
}

TEST(DoctorCli, LibraryMismatchSaysReboot) {
  ProcessResult r = run_gpuenv({"doctor", "--json"}, stand_ins("init_version_mismatch"));
  EXPECT_EQ(r.exit_code, 1);
  bool reboot = false;
  json j = findings(r);  // kept alive: a range-for over a temporary's member dangles
  for (const auto& f : j["findings"])
    if (f["check"] == "nvml" && f["fix"].is_string())
      reboot = reboot || f["fix"].get<std::string>().find("reboot") != std::string::npos;
  EXPECT_TRUE(reboot) << r.out;
}

// Each CUDA error cuInit can return names its cause and its own fix.
TEST(DoctorCli, EachCuInitFailureIsExplained) {
  struct Case {
    int code;
    const char* name;
    const char* fix;
  };
  const Case cases[] = {
      {100, "CUDA_ERROR_NO_DEVICE", "--gpus all"},
      {35, "CUDA_ERROR_INSUFFICIENT_DRIVER", "upgrade the NVIDIA driver"},
      {802, "CUDA_ERROR_SYSTEM_NOT_READY", "nvidia-fabricmanager"},
      {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cuda-compat"},
      {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "upgrade the NVIDIA driver instead"},
      {999, "CUDA_ERROR_UNKNOWN", "dmesg"},
  };
  std::ifstream in(kScenarios + "h200.txt");
  std::string h200((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ProcessOptions o = stand_ins("h200");
    o.env["FAKE_CUDA_SCENARIO"] =
        write_temp_file("cuda.txt", h200 + "fault cuinit=" + std::to_string(c.code) + "\n");
    ProcessResult r = run_gpuenv({"doctor", "--json"}, o);
    EXPECT_EQ(r.exit_code, 1);
    json j = findings(r);
    bool found = false;
    for (const auto& f : j["findings"])
      if (f["check"] == "cuda_init" && f["status"] == "error") {
        found = true;
        EXPECT_NE(f["seen"].get<std::string>().find(std::string(c.name) + " = " +
                                                    std::to_string(c.code)),
                  std::string::npos)
            << f["seen"];
        EXPECT_NE(f["fix"].get<std::string>().find(c.fix), std::string::npos) << f["fix"];
      }
    EXPECT_TRUE(found) << r.out;
  }
}

TEST(DoctorCli, NvmlFailuresNameTheirCause) {
  struct Case {
    const char* scenario;
    const char* seen;
  };
  const Case cases[] = {
      {"no_permission", "NVML_ERROR_NO_PERMISSION"},
      {"init_driver_not_loaded", "NVML_ERROR_DRIVER_NOT_LOADED"},
      {"gpu_lost", "NVML_ERROR_GPU_IS_LOST"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.scenario);
    ProcessResult r = run_gpuenv({"doctor", "--json"}, stand_ins(c.scenario));
    EXPECT_EQ(r.exit_code, 1);
    json j = findings(r);
    bool found = false;
    for (const auto& f : j["findings"])
      found = found || (f["check"] == "nvml" && f["status"] == "error" &&
                        f["seen"].get<std::string>().find(c.seen) != std::string::npos &&
                        f["fix"].is_string());
    EXPECT_TRUE(found) << r.out;
  }
}

TEST(DoctorCli, KernelsFromTheVenvsLibtorchCuda) {
  ProcessOptions o = stand_ins("h200_health");
  // sm_89 SASS and compute_89 PTX: an H200 (9.0) runs it only through JIT.
  std::string py = fake_venv("2.11.0+cu130", "13.0", "sm89_ptx89.so");
  json j = findings(run_gpuenv({"doctor", "--json", "--python", py}, o));
  auto kernels = of(j, "kernels");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_TRUE(any_has(kernels, "warning: libtorch_cuda.so on NVIDIA H200 (Hopper, 9.0)"));
  EXPECT_TRUE(any_has(kernels, "compute_89 PTX"));
  EXPECT_TRUE(any_has(of(j, "torch"), "ok: torch 2.11.0+cu130 (CUDA 13.0)"));
  EXPECT_TRUE(any_has(of(j, "bytecode"), "ok:"));

  py = fake_venv("2.11.0+cu130", "13.0", "sm80_sm90_ptx90.fatbin");
  j = findings(run_gpuenv({"doctor", "--json", "--python", py}, o));
  EXPECT_TRUE(any_has(of(j, "kernels"), "ok: libtorch_cuda.so runs natively on NVIDIA H200 "
                                        "(Hopper, 9.0): its sm_90 cubins"));
}

TEST(DoctorCli, CpuOnlyTorchOnAGpuMachine) {
  std::string py = fake_venv("2.11.0+cpu", "", "");
  ProcessResult r = run_gpuenv({"doctor", "--json", "--python", py}, stand_ins("h200_health"));
  EXPECT_EQ(r.exit_code, 1);
  json j = findings(r);
  EXPECT_TRUE(any_has(of(j, "torch"), "error: torch 2.11.0+cpu"));
  EXPECT_TRUE(of(j, "kernels").empty());
}

TEST(DoctorCli, PythonThatDoesNotExistExit3) {
  ProcessResult r = run_gpuenv({"doctor", "--python", "/nonexistent/bin/python3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("--python /nonexistent/bin/python3: no such file"), std::string::npos)
      << r.err;
}

std::string snapshot(Machine m) {
  return write_temp_file("machine.json", machine_to_json(m));
}

Machine healthy() {
  Machine m = machine::h200(1);
  m.host.nvidia_device_nodes = {"/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"};
  m.nvidia.cuda_init_result = 0;
  Torch t;
  t.version = "2.11.0+cu130";
  t.cuda_version = "13.0";
  t.bytecode_cached = true;
  t.libtorch_cuda =
      CudaBinary{"/v/torch/lib/libtorch_cuda.so", "torch", {"sm_90"}, std::nullopt, std::nullopt};
  m.torch = t;
  return m;
}

TEST(DoctorCli, ExitCodesFromSnapshots) {
  ProcessResult r = run_gpuenv({"doctor", "--machine", snapshot(healthy())});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("gpuenv doctor: 0 errors, 0 warnings"), std::string::npos) << r.out;

  Machine small_shm = healthy();
  small_shm.host.shm_bytes = 64ull << 20;
  small_shm.host.container = "docker";
  r = run_gpuenv({"doctor", "--machine", snapshot(small_shm)});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("--shm-size"), std::string::npos) << r.out;

  Machine cu130_on_570 = healthy();
  cu130_on_570.nvidia.driver_version = "570.124.06";
  cu130_on_570.nvidia.cuda_driver_version = 12080;
  r = run_gpuenv({"doctor", "--json", "--machine", snapshot(cu130_on_570)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(any_has(of(findings(r), "driver_compat"), "error: torch 2.11.0+cu130 bundles CUDA "
                                                         "13.0; driver 570.124.06 supports CUDA 12.8"));
}

// The exporter's DCGM_FI_PROF_* fields on the A100 profile: which and why,
// said without a warning; a snapshot where doctor loaded libdcgm says DCGM serves them.
TEST(DoctorCli, ProfilingFieldsOnTheA100Profile) {
  EXPECT_EQ(fix_of("a100x8-nvlink", "profiling"),
            "ok: DCGM_FI_PROF_*: NVML GPM needs Hopper or newer; install DCGM (libdcgm.so.4) to serve them on "
            "this A100 | ");
  Machine with_dcgm = machine::a100_nvlink_8();
  with_dcgm.nvidia.dcgm_library = "libdcgm.so.4";
  json j = findings(run_gpuenv({"doctor", "--json", "--machine", snapshot(with_dcgm)}));
  EXPECT_TRUE(any_has(of(j, "profiling"), "ok: DCGM_FI_PROF_*: `gpuenv export` reads them from DCGM (libdcgm.so.4)"))
      << j.dump();
}

TEST(DoctorCli, ListNamesEveryCheck) {
  ProcessResult r = run_gpuenv({"doctor", "--list"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name : {"nvml", "cuda_init", "kernels", "shm", "fabric", "p2p"})
    EXPECT_NE(r.out.find(std::string(name) + "\t"), std::string::npos) << name;
}

}  // namespace
}  // namespace gpuenv::testing

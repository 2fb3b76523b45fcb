// sense_nvidia end to end through the real dlopen path, one test per
// stand-in scenario (tests/fake_nvml/scenarios), with exact values: what
// the scenario holds must come back, what it lacks must stay unknown.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "model/hardware/clock_events.h"
#include "sense/nvml/nvml_errors.h"
#include "sense/nvml/nvml_test_support.h"

namespace gpuenv {
namespace {

using testing::cpu_ranges;
using testing::FakeNvidiaTest;
using testing::FakeRun;
using testing::scenario;

using NvidiaSense = FakeNvidiaTest;

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::vector<std::string> codes(const std::vector<Problem>& problems) {
  std::vector<std::string> out;
  for (const Problem& p : problems) out.push_back(p.code);
  return out;
}

Gpu h200() {
  Gpu g;
  g.index = 0;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d10";
  g.pci_bus_id = "00000000:19:00.0";
  g.compute_capability = ComputeCapability{9, 0};
  g.memory_total_bytes = 150754820096ull;
  g.memory_free_bytes = 150141403136ull;
  g.mig_enabled = false;
  g.persistence_mode = true;
  g.compute_mode = "default";
  g.pcie = {5, 5, 16, 16};
  g.power_limit_mw = 700000;
  g.max_sm_clock_mhz = 1980;
  g.max_memory_clock_mhz = 3201;
  g.nvlink_active_links = 18;
  g.cpu_affinity = cpu_ranges({{0, 47}, {96, 143}});
  g.numa_node = 0;
  return g;
}

TEST_F(NvidiaSense, H200Single) {
  Machine m = sense(FakeRun().scenario(scenario("h200")));
  EXPECT_GPUS_EQ(m.gpus, std::vector<Gpu>{h200()});
  EXPECT_EQ(m.nvidia.nvml_library, testing::kFakeNvml);
  EXPECT_EQ(m.nvidia.driver_version, "580.95.05");
  EXPECT_EQ(m.nvidia.cuda_driver_version, 13000);
  EXPECT_TRUE(m.nvidia.problems.empty()) << m.nvidia.problems[0].message;
  EXPECT_TRUE(m.pairs.empty());
}

TEST_F(NvidiaSense, CallsTheNewestVersionsAndLeavesNvmlInitialised) {
  sense(FakeRun().scenario(scenario("h200")));
  std::vector<std::string> trace = nvml_trace();
  for (const char* fn : {"nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
                         "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetMemoryInfo_v2",
                         "nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetNumaNodeId"})
    EXPECT_TRUE(contains(trace, fn)) << fn;
  for (const char* fn : {"nvmlInit", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetPciInfo_v2"})
    EXPECT_FALSE(contains(trace, fn)) << fn;
  // Sensing is one-shot: nvmlShutdown (~6 ms on an H200 host) is left to
  // the process's exit. The library stays mapped (RTLD_NODELETE), and the
  // device files are closed on exec for `gpuenv run`'s command.
  EXPECT_EQ(std::count(trace.begin(), trace.end(), "nvmlInit_v2"), 1);
  EXPECT_FALSE(contains(trace, "nvmlShutdown"));
}

TEST_F(NvidiaSense, DoesNotLoadCudaUnlessAsked) {
  Machine m = sense(FakeRun().scenario(scenario("h200")).fake_cuda(scenario("h200")));
  EXPECT_FALSE(cuda_was_loaded());
  EXPECT_EQ(m.gpus[0].multiprocessor_count, std::nullopt);
}

Gpu a100(int i) {
  static const char* kBuses[] = {"07", "0F", "47", "4E", "87", "90", "B7", "BD"};
  Gpu g;
  g.index = i;
  g.name = "NVIDIA A100-SXM4-80GB";
  g.uuid = "GPU-a100000" + std::to_string(i) + "-0000-4000-8000-00000000000" + std::to_string(i);
  g.pci_bus_id = std::string("00000000:") + kBuses[i] + ":00.0";
  g.compute_capability = ComputeCapability{8, 0};
  g.memory_total_bytes = 85899345920ull;
  g.memory_free_bytes = 85359329280ull;
  g.mig_enabled = false;
  g.persistence_mode = true;
  g.compute_mode = "default";
  g.pcie = {4, 4, 16, 16};
  g.power_limit_mw = 400000;
  g.max_sm_clock_mhz = 1410;
  g.max_memory_clock_mhz = 1593;
  g.nvlink_active_links = i == 7 ? 10 : 12;
  g.cpu_affinity = i < 4 ? cpu_ranges({{0, 31}, {64, 95}}) : cpu_ranges({{32, 63}, {96, 127}});
  g.numa_node = i < 4 ? 0 : 1;
  return g;
}

std::string a100_topology(int a, int b) {
  if (a / 4 != b / 4) return "system";
  return a / 2 == b / 2 ? "multiple" : "node";
}

TEST_F(NvidiaSense, A100NvlinkTwoSockets) {
  Machine m = sense(FakeRun().scenario(scenario("a100_nvlink_8")));
  std::vector<Gpu> expected;
  for (int i = 0; i < 8; ++i) expected.push_back(a100(i));
  EXPECT_GPUS_EQ(m.gpus, expected);
  std::vector<GpuPair> pairs;
  for (int a = 0; a < 8; ++a)
    for (int b = a + 1; b < 8; ++b) pairs.push_back({a, b, a100_topology(a, b), "ok", "ok"});
  EXPECT_EQ(m.pairs, pairs);
  EXPECT_EQ(m.nvidia.driver_version, "570.153.02");
  EXPECT_EQ(m.nvidia.cuda_driver_version, 12080);
  EXPECT_TRUE(m.nvidia.problems.empty());
}

MigDevice mig_2g(int slot) {
  MigDevice d;
  d.index = slot;
  d.uuid = "MIG-5f2e0c1a-0d4b-5a8e-9c3f-00000000000" + std::to_string(slot + 3);
  d.name = "NVIDIA A100-SXM4-80GB MIG 2g.20gb";
  d.memory_total_bytes = 20937965568ull;
  d.gpu_instance_id = slot + 3;
  d.compute_instance_id = 0;
  // nvmlDeviceGetAttributes_v2: 28 SMs, 2 copy engines, 1 decoder, 2 GPU and
  // 2 compute instance slices, 19968 MiB (the scenario's attrs=).
  d.attributes = MigAttributes{28, 2, 1, 0, 0, 0, 2, 2, 19968};
  return d;
}

TEST_F(NvidiaSense, A100Mig) {
  Machine m = sense(FakeRun().scenario(scenario("a100_mig")));
  Gpu g = a100(0);
  g.uuid = "GPU-a100a100-0000-4000-8000-00000000a100";
  g.mig_enabled = true;
  g.mig_devices = {mig_2g(0), mig_2g(1), mig_2g(2)};
  EXPECT_GPUS_EQ(m.gpus, std::vector<Gpu>{g});
  EXPECT_TRUE(m.nvidia.problems.empty());
}

std::vector<Gpu> rtx3090_4090() {
  Gpu a;
  a.index = 0;
  a.name = "NVIDIA GeForce RTX 3090";
  a.uuid = "GPU-30900000-1111-4222-8333-444444444444";
  a.pci_bus_id = "00000000:01:00.0";
  a.compute_capability = ComputeCapability{8, 6};
  a.memory_total_bytes = 25769803776ull;
  a.memory_free_bytes = 25421676544ull;
  a.persistence_mode = false;
  a.compute_mode = "default";
  a.pcie = {4, 4, 16, 16};
  a.power_limit_mw = 350000;
  a.max_sm_clock_mhz = 2100;
  a.max_memory_clock_mhz = 9751;
  a.cpu_affinity = cpu_ranges({{0, 31}});
  Gpu b = a;  // same box: same CPUs; no MIG, NVLink or NUMA on either
  b.index = 1;
  b.name = "NVIDIA GeForce RTX 4090";
  b.uuid = "GPU-40900000-5555-4666-8777-888888888888";
  b.pci_bus_id = "00000000:41:00.0";
  b.compute_capability = ComputeCapability{8, 9};
  b.memory_total_bytes = 25757220864ull;
  b.memory_free_bytes = 25409093632ull;
  b.pcie = {4, 4, 8, 16};
  b.power_limit_mw = 450000;
  b.max_sm_clock_mhz = 3105;
  b.max_memory_clock_mhz = 10501;
  return {a, b};
}

TEST_F(NvidiaSense, Rtx3090And4090MixedWithoutP2p) {
  Machine m = sense(FakeRun().scenario(scenario("rtx3090_4090")));
  EXPECT_GPUS_EQ(m.gpus, rtx3090_4090());
  EXPECT_EQ(m.pairs,
            (std::vector<GpuPair>{{0, 1, "hostbridge", "chipset_not_supported", "not_supported"}}));
  EXPECT_TRUE(m.nvidia.problems.empty());
}

TEST_F(NvidiaSense, WithCudaAddsMultiprocessorCountsToTheSameGpus) {
  // CUDA enumerates the 4090 first (FASTEST_FIRST); matching is by UUID.
  Machine m = sense(
      FakeRun().scenario(scenario("rtx3090_4090")).fake_cuda(scenario("rtx3090_4090")).with_cuda());
  std::vector<Gpu> expected = rtx3090_4090();
  expected[0].multiprocessor_count = 82;
  expected[1].multiprocessor_count = 128;
  EXPECT_GPUS_EQ(m.gpus, expected);
  EXPECT_TRUE(contains(cuda_trace(), "cuInit"));
  EXPECT_TRUE(m.nvidia.problems.empty());
}

TEST_F(NvidiaSense, WithCudaMatchesByPciAddressWhenUuidsAreMissing) {
  std::string cuda = write_scenario(
      "system cuda=12080 cuda_order=1,0\n"
      "gpu name=\"NVIDIA GeForce RTX 3090\" pci=00000000:01:00.0 cc=8.6 sms=82\n"
      "gpu name=\"NVIDIA GeForce RTX 4090\" pci=00000000:41:00.0 cc=8.9 sms=128\n");
  Machine m = sense(FakeRun().scenario(scenario("rtx3090_4090")).fake_cuda(cuda).with_cuda());
  ASSERT_EQ(m.gpus.size(), 2u);
  EXPECT_EQ(m.gpus[0].multiprocessor_count, 82);
  EXPECT_EQ(m.gpus[1].multiprocessor_count, 128);
}

TEST_F(NvidiaSense, InitVersionMismatchThenCudaFallbackFailsToo) {
  Machine m = sense(FakeRun()
                        .scenario(scenario("init_version_mismatch"))
                        .fake_cuda(scenario("init_version_mismatch")));
  ASSERT_EQ(codes(m.nvidia.problems),
            (std::vector<std::string>{"nvml_version_mismatch", "cuda_driver_mismatch"}));
  const Problem& p = m.nvidia.problems[0];
  EXPECT_EQ(p.source, "nvml");
  EXPECT_EQ(p.message,
            "nvmlInit_v2 failed: Driver/library version mismatch: the driver was upgraded but "
            "the old kernel module is still loaded (NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18)");
  EXPECT_EQ(p.fix.find("reboot, or reload the nvidia kernel modules"), 0u) << p.fix;
  EXPECT_EQ(m.nvidia.problems[1].source, "cuda");
  EXPECT_EQ(m.nvidia.problems[1].message.find("cuInit failed: "), 0u);
  EXPECT_EQ(m.nvidia.nvml_library, testing::kFakeNvml);
  EXPECT_EQ(m.nvidia.driver_version, std::nullopt);
  EXPECT_EQ(m.nvidia.cuda_driver_version, 13000);  // cuDriverGetVersion needs no cuInit
  EXPECT_TRUE(m.gpus.empty());
  EXPECT_FALSE(contains(nvml_trace(), "nvmlShutdown"));  // nothing to shut down
}

TEST_F(NvidiaSense, InitDriverNotLoaded) {
  Machine m = sense(FakeRun()
                        .scenario(scenario("init_driver_not_loaded"))
                        .fake_cuda(scenario("init_driver_not_loaded")));
  ASSERT_EQ(codes(m.nvidia.problems),
            (std::vector<std::string>{"nvml_driver_not_loaded", "cuda_no_device"}));
  EXPECT_EQ(m.nvidia.problems[0].message,
            "nvmlInit_v2 failed: the nvidia kernel module is not loaded "
            "(NVML_ERROR_DRIVER_NOT_LOADED = 9)");
  EXPECT_EQ(m.nvidia.problems[0].fix.find("load it with `sudo modprobe nvidia`, or reinstall "
                                          "the driver"),
            0u);
  EXPECT_TRUE(m.gpus.empty());
}

TEST_F(NvidiaSense, NoPermission) {
  Machine m =
      sense(FakeRun().scenario(scenario("no_permission")).fake_cuda(scenario("no_permission")));
  ASSERT_EQ(codes(m.nvidia.problems),
            (std::vector<std::string>{"nvml_no_permission", "cuda_operating_system"}));
  const Problem& p = m.nvidia.problems[0];
  EXPECT_EQ(p.message,
            "nvmlInit_v2 failed: no permission to use the NVIDIA device files (/dev/nvidiactl, "
            "/dev/nvidia*) (NVML_ERROR_NO_PERMISSION = 4)");
  EXPECT_NE(p.fix.find("/dev/nvidia*"), std::string::npos);
  EXPECT_NE(p.fix.find("--gpus all"), std::string::npos);
  EXPECT_NE(p.fix.find("device cgroup"), std::string::npos);
}

Gpu l4(int i) {
  Gpu g;
  g.index = i;
  g.name = "NVIDIA L4";
  g.uuid = "GPU-1400000" + std::to_string(i) + "-0000-4000-8000-00000000000" + std::to_string(i);
  g.pci_bus_id = "00000000:0" + std::to_string(i + 1) + ":00.0";
  g.compute_capability = ComputeCapability{8, 9};
  g.memory_total_bytes = 24152899584ull;
  g.memory_free_bytes = 23695720448ull;
  g.persistence_mode = true;
  g.compute_mode = "default";
  g.pcie = {4, 4, 16, 16};
  g.power_limit_mw = 72000;
  g.max_sm_clock_mhz = 2040;
  g.max_memory_clock_mhz = 6251;
  g.cpu_affinity = i < 2 ? cpu_ranges({{0, 15}}) : cpu_ranges({{16, 31}});
  g.numa_node = i < 2 ? 0 : 1;
  return g;
}

Problem gpu_lost(const std::string& call) {
  const NvmlError* e = find_nvml_error(nvml::kErrorGpuIsLost);
  return {"nvml", "nvml_gpu_lost",
          call +
              " failed: the GPU has fallen off the bus or is otherwise inaccessible "
              "(NVML_ERROR_GPU_IS_LOST = 15)",
          e->fix};
}

TEST_F(NvidiaSense, GpuLostMidQueryKeepsTheOthers) {
  Machine m = sense(FakeRun().scenario(scenario("gpu_lost")));
  Gpu lost;
  lost.index = 1;
  lost.name = "NVIDIA L4";  // its 2nd query; the 3rd (the UUID) found it gone
  lost.problem = gpu_lost("nvmlDeviceGetUUID(GPU 1)");
  EXPECT_GPUS_EQ(m.gpus, (std::vector<Gpu>{l4(0), lost, l4(2)}));
  EXPECT_EQ(m.pairs, (std::vector<GpuPair>{{0, 2, "node", "ok", "not_supported"}}));
  EXPECT_TRUE(m.nvidia.problems.empty());
  EXPECT_EQ(m.nvidia.driver_version, "570.153.02");
  EXPECT_FALSE(contains(nvml_trace(), "nvmlShutdown"));  // left to the process's exit
}

TEST_F(NvidiaSense, GpuLostBeforeItsHandle) {
  std::string text = scenario_text("gpu_lost");
  text.replace(text.find("after=2"), 7, "after=0");
  Machine m = sense(FakeRun().scenario(write_scenario(text)));
  Gpu lost;
  lost.index = 1;
  lost.problem = gpu_lost("nvmlDeviceGetHandleByIndex_v2(GPU 1)");
  EXPECT_GPUS_EQ(m.gpus, (std::vector<Gpu>{l4(0), lost, l4(2)}));
  EXPECT_EQ(m.pairs.size(), 1u);
}

Gpu v100(int i) {
  Gpu g;
  g.index = i;
  g.name = "Tesla V100-SXM2-16GB";
  g.uuid = "GPU-1000000" + std::to_string(i) + "-aaaa-4bbb-8ccc-dddddddddddd";
  g.pci_bus_id = i == 0 ? "00000000:1A:00.0" : "00000000:1C:00.0";
  g.compute_capability = ComputeCapability{7, 0};
  g.memory_total_bytes = 17179869184ull;
  g.memory_free_bytes = 16936271872ull;
  g.persistence_mode = true;
  g.compute_mode = "exclusive_process";
  g.pcie = {3, 3, 16, 16};
  g.power_limit_mw = 300000;
  g.max_sm_clock_mhz = 1530;
  g.max_memory_clock_mhz = 877;
  g.nvlink_active_links = 6;
  g.cpu_affinity = cpu_ranges({{0, 19}});
  return g;  // no mig_enabled, no numa_node: the old driver cannot say
}

TEST_F(NvidiaSense, OldDriverWithoutOptionalFunctions) {
  Machine m = sense(FakeRun().nvml(testing::kOldNvml).scenario(scenario("old_driver")));
  EXPECT_GPUS_EQ(m.gpus, (std::vector<Gpu>{v100(0), v100(1)}));
  EXPECT_EQ(m.pairs, (std::vector<GpuPair>{{0, 1, "multiple", "ok", "ok"}}));
  EXPECT_EQ(m.nvidia.driver_version, "418.87.01");
  EXPECT_EQ(m.nvidia.cuda_driver_version, 10010);
  EXPECT_TRUE(m.nvidia.problems.empty());
  std::vector<std::string> trace = nvml_trace();
  for (const char* fn :
       {"nvmlInit", "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetPciInfo",
        "nvmlDeviceGetMemoryInfo", "nvmlSystemGetCudaDriverVersion"})
    EXPECT_TRUE(contains(trace, fn)) << fn;
  for (const std::string& fn : trace) EXPECT_EQ(fn.find("_v"), std::string::npos) << fn;
}

TEST_F(NvidiaSense, SameScenarioOnACurrentDriverHasTheOptionalFields) {
  Machine m = sense(FakeRun().scenario(scenario("old_driver")));
  std::vector<Gpu> expected{v100(0), v100(1)};
  for (Gpu& g : expected) {
    g.numa_node = 0;
    g.mig_enabled = false;
  }
  EXPECT_GPUS_EQ(m.gpus, expected);
}

TEST_F(NvidiaSense, LibraryMissing) {
  Machine m = sense(FakeRun().nvml(testing::kNoNvml));
  ASSERT_EQ(codes(m.nvidia.problems),
            (std::vector<std::string>{"nvml_library_not_found", "cuda_library_not_found"}));
  const Problem& p = m.nvidia.problems[0];
  EXPECT_EQ(p.source, "nvml");
  EXPECT_EQ(p.message,
            "cannot load NVML (/nonexistent/libnvidia-ml.so.1): /nonexistent/libnvidia-ml.so.1: "
            "cannot open shared object file: No such file or directory");
  for (const char* hint : {"install the NVIDIA driver", "--gpus all", "NVIDIA Container Toolkit",
                           "GPUENV_NVML_LIBRARY"})
    EXPECT_NE(p.fix.find(hint), std::string::npos) << hint;
  EXPECT_EQ(m.nvidia.problems[1].message,
            "cannot load the CUDA driver (/nonexistent/libcuda.so.1): /nonexistent/libcuda.so.1: "
            "cannot open shared object file: No such file or directory");
  EXPECT_EQ(m.nvidia.nvml_library, std::nullopt);
  EXPECT_TRUE(m.gpus.empty());
  EXPECT_EQ(m.nvidia.cuda_driver_version, std::nullopt);
}

TEST_F(NvidiaSense, NotAnNvmlLibrary) {
  Machine m = sense(FakeRun().nvml(testing::kFakeCuda));
  ASSERT_FALSE(m.nvidia.problems.empty());
  const Problem& p = m.nvidia.problems[0];
  EXPECT_EQ(p.code, "nvml_symbol_missing");
  EXPECT_EQ(p.message, testing::kFakeCuda +
                           " is not a usable NVML: it exports no nvmlInit_v2 or "
                           "nvmlInit");
  EXPECT_NE(p.fix.find("GPUENV_NVML_LIBRARY"), std::string::npos);
}

TEST_F(NvidiaSense, JetsonHasNoNvmlSoCudaAnswers) {
  Machine m = sense(FakeRun().nvml(testing::kNoNvml).fake_cuda(scenario("jetson_orin")));
  Gpu g;
  g.index = 0;
  g.name = "Orin";
  g.uuid = "GPU-0e0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8";
  g.pci_bus_id = "00000000:00:00.0";
  g.compute_capability = ComputeCapability{8, 7};
  g.memory_total_bytes = 65893564416ull;
  g.multiprocessor_count = 16;
  EXPECT_GPUS_EQ(m.gpus, std::vector<Gpu>{g});
  EXPECT_EQ(codes(m.nvidia.problems), std::vector<std::string>{"nvml_library_not_found"});
  EXPECT_EQ(m.nvidia.cuda_driver_version, 12060);
  EXPECT_EQ(m.nvidia.driver_version, std::nullopt);
  EXPECT_TRUE(m.pairs.empty());
}

TEST_F(NvidiaSense, OneFailingQueryLeavesOneFieldUnknown) {
  std::string text =
      scenario_text("h200") + "fault fn=nvmlDeviceGetPowerManagementLimit code=999 gpu=0\n";
  Machine m = sense(FakeRun().scenario(write_scenario(text)));
  Gpu expected = h200();
  expected.power_limit_mw = std::nullopt;
  EXPECT_GPUS_EQ(m.gpus, std::vector<Gpu>{expected});
  ASSERT_EQ(m.nvidia.problems.size(), 1u);
  EXPECT_EQ(m.nvidia.problems[0].code, "nvml_unknown");
  EXPECT_EQ(m.nvidia.problems[0].message,
            "nvmlDeviceGetPowerManagementLimit(GPU 0) failed: NVML failed with an unknown "
            "internal error (NVML_ERROR_UNKNOWN = 999)");
}

TEST_F(NvidiaSense, CountFailureFallsBackToCuda) {
  std::string text = scenario_text("h200") + "fault fn=nvmlDeviceGetCount_v2 code=999\n";
  std::string path = write_scenario(text);
  Machine m = sense(FakeRun().scenario(path).fake_cuda(path));
  EXPECT_EQ(codes(m.nvidia.problems), std::vector<std::string>{"nvml_unknown"});
  EXPECT_EQ(m.nvidia.problems[0].message.find("nvmlDeviceGetCount_v2 failed: "), 0u);
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_EQ(m.gpus[0].uuid, h200().uuid);
  EXPECT_EQ(m.gpus[0].multiprocessor_count, 132);
  EXPECT_EQ(m.gpus[0].numa_node, std::nullopt);  // CUDA cannot tell
}

TEST_F(NvidiaSense, CudaFallbackListsGpusInPciOrderLikeNvml) {
  std::string text = scenario_text("rtx3090_4090") + "fault init=999\n";
  std::string path = write_scenario(text);
  Machine m = sense(FakeRun().scenario(path).fake_cuda(path));
  ASSERT_EQ(m.gpus.size(), 2u);  // CUDA enumerates the 4090 first
  EXPECT_EQ(m.gpus[0].index, 0);
  EXPECT_EQ(m.gpus[0].name, "NVIDIA GeForce RTX 3090");
  EXPECT_EQ(m.gpus[0].pci_bus_id, "00000000:01:00.0");
  EXPECT_EQ(m.gpus[0].multiprocessor_count, 82);
  EXPECT_EQ(m.gpus[1].index, 1);
  EXPECT_EQ(m.gpus[1].name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(m.gpus[1].uuid, "GPU-40900000-5555-4666-8777-888888888888");
  EXPECT_EQ(m.gpus[1].compute_capability, (ComputeCapability{8, 9}));
  EXPECT_EQ(m.gpus[1].memory_total_bytes, 25757220864ull);
  EXPECT_EQ(m.gpus[1].memory_free_bytes, std::nullopt);  // CUDA's total only
  EXPECT_EQ(codes(m.nvidia.problems), std::vector<std::string>{"nvml_unknown"});
}

TEST_F(NvidiaSense, SwitchesScenariosInOneProcess) {
  EXPECT_EQ(sense(FakeRun().scenario(scenario("h200"))).gpus.size(), 1u);
  EXPECT_EQ(sense(FakeRun().scenario(scenario("a100_nvlink_8"))).gpus.size(), 8u);
  EXPECT_EQ(sense(FakeRun().nvml(testing::kOldNvml).scenario(scenario("old_driver"))).gpus,
            (std::vector<Gpu>{v100(0), v100(1)}));
  EXPECT_EQ(sense(FakeRun().scenario(scenario("h200"))).gpus, std::vector<Gpu>{h200()});
}

// --- CPU affinity and NUMA node from sysfs -----------------------------

// A fake root holding sys/bus/pci/devices/<address>/{local_cpulist,numa_node}.
class PciSysfs {
 public:
  PciSysfs() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpuenv_pci_XXXXXX").string();
    root_ = mkdtemp(tmpl.data());
  }
  ~PciSysfs() { std::filesystem::remove_all(root_); }
  const std::string& root() const { return root_; }

  /// A file of a device; an empty text is written as an empty file.
  void file(const std::string& address, const std::string& name, const std::string& text) {
    std::string dir = root_ + "/sys/bus/pci/devices/" + address;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/" + name) << text;
  }

 private:
  std::string root_;
};

TEST_F(NvidiaSense, CpuAffinityAndNumaNodeFromSysfsNotNvml) {
  PciSysfs sys;
  sys.file("0000:19:00.0", "local_cpulist", "48-95,144-191\n");
  sys.file("0000:19:00.0", "numa_node", "1\n");
  Machine m = sense(FakeRun().scenario(scenario("h200")).root(sys.root()));
  Gpu expected = h200();
  expected.cpu_affinity = cpu_ranges({{48, 95}, {144, 191}});  // not the scenario's 0-47,96-143
  expected.numa_node = 1;
  EXPECT_GPUS_EQ(m.gpus, std::vector<Gpu>{expected});
  std::vector<std::string> trace = nvml_trace();
  EXPECT_FALSE(contains(trace, "nvmlDeviceGetCpuAffinity"));
  EXPECT_FALSE(contains(trace, "nvmlDeviceGetNumaNodeId"));
  EXPECT_TRUE(m.nvidia.problems.empty());
}

// GFD's gpu.mode: the PCI class sysfs gives the device; unknown when the
// file is missing or not a class.
TEST_F(NvidiaSense, PciClassFromSysfs) {
  PciSysfs sys;
  sys.file("0000:19:00.0", "class", "0x030200\n");
  EXPECT_EQ(sense(FakeRun().scenario(scenario("h200")).root(sys.root())).gpus.at(0).pci_class, "0x030200");
  sys.file("0000:19:00.0", "class", "3D controller\n");
  EXPECT_EQ(sense(FakeRun().scenario(scenario("h200")).root(sys.root())).gpus.at(0).pci_class, std::nullopt);
  PciSysfs empty;
  EXPECT_EQ(sense(FakeRun().scenario(scenario("h200")).root(empty.root())).gpus.at(0).pci_class, std::nullopt);
}

// The topology level comes from where sysfs puts the two GPUs (NVML's own
// query costs ~17 ms on the 2x H200 machine): here under two root complexes
// on different NUMA nodes, where the scenario's NVML says "hostbridge".
TEST_F(NvidiaSense, PairTopologyFromTheSysfsPciTree) {
  PciSysfs sys;
  auto place = [&](const std::string& address, const std::string& device_path, int numa) {
    std::string dir = sys.root() + "/sys/devices/" + device_path;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/numa_node") << numa << "\n";
    std::filesystem::create_directories(sys.root() + "/sys/bus/pci/devices");
    std::filesystem::create_symlink("../../../devices/" + device_path,
                                    sys.root() + "/sys/bus/pci/devices/" + address);
  };
  place("0000:01:00.0", "pci0000:00/0000:00:01.0/0000:01:00.0", 0);
  place("0000:41:00.0", "pci0000:40/0000:40:01.0/0000:41:00.0", 1);
  Machine m = sense(FakeRun().scenario(scenario("rtx3090_4090")).root(sys.root()));
  ASSERT_EQ(m.pairs.size(), 1u);
  EXPECT_EQ(m.pairs[0].topology, "system");
  EXPECT_EQ(m.pairs[0].p2p_read, "chipset_not_supported");  // still NVML's
  EXPECT_FALSE(contains(nvml_trace(), "nvmlDeviceGetTopologyCommonAncestor"));
  EXPECT_TRUE(m.nvidia.problems.empty());
}

TEST_F(NvidiaSense, SysfsNumaNodeMinusOneIsNoneWithoutAskingNvml) {
  PciSysfs sys;
  sys.file("0000:19:00.0", "local_cpulist", "0-47,96-143\n");
  sys.file("0000:19:00.0", "numa_node", "-1\n");
  Machine m = sense(FakeRun().scenario(scenario("h200")).root(sys.root()));
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_EQ(m.gpus[0].numa_node, std::nullopt);
  EXPECT_EQ(m.gpus[0].cpu_affinity, h200().cpu_affinity);
  EXPECT_FALSE(contains(nvml_trace(), "nvmlDeviceGetNumaNodeId"));
}

TEST_F(NvidiaSense, UnreadableSysfsFallsBackToNvml) {
  for (const char* cpulist : std::initializer_list<const char*>{"garbage\n", "\n", nullptr}) {
    SCOPED_TRACE(cpulist ? cpulist : "(missing)");
    std::remove(nvml_trace_path().c_str());
    PciSysfs sys;
    if (cpulist) sys.file("0000:19:00.0", "local_cpulist", cpulist);
    sys.file("0000:19:00.0", "numa_node", "zero\n");
    Machine m = sense(FakeRun().scenario(scenario("h200")).root(sys.root()));
    EXPECT_GPUS_EQ(m.gpus, std::vector<Gpu>{h200()});  // NVML's answers
    EXPECT_TRUE(contains(nvml_trace(), "nvmlDeviceGetCpuAffinity"));
    EXPECT_TRUE(contains(nvml_trace(), "nvmlDeviceGetNumaNodeId"));
  }
}

TEST_F(NvidiaSense, SysfsAddressesAreLowerCaseWithAFourDigitDomain) {
  PciSysfs sys;  // NVML says 00000000:0F:00.0 and 00000000:B7:00.0
  sys.file("0000:0f:00.0", "local_cpulist", "200-201\n");
  sys.file("0000:0f:00.0", "numa_node", "3\n");
  sys.file("0000:b7:00.0", "numa_node", "-1\n");
  Machine m = sense(FakeRun().scenario(scenario("a100_nvlink_8")).root(sys.root()));
  std::vector<Gpu> expected;
  for (int i = 0; i < 8; ++i) expected.push_back(a100(i));
  expected[1].cpu_affinity = std::vector<int>{200, 201};
  expected[1].numa_node = 3;
  expected[6].numa_node = std::nullopt;  // its CPUs still from NVML
  EXPECT_GPUS_EQ(m.gpus, expected);
}

// --- concurrency ------------------------------------------------------------

TEST_F(NvidiaSense, QueriesGpusAndPairsConcurrently) {
  // Each GPU's name query waits until all 8 are in at once, and each pair's
  // topology query until 8 of the 28 are: one after another, none meets
  // (and each wait gives up after 20 s).
  std::string text = scenario_text("a100_nvlink_8") +
                     "fault fn=nvmlDeviceGetName meet=8\n"
                     "fault fn=nvmlDeviceGetTopologyCommonAncestor meet=8\n";
  Machine m = sense(FakeRun().scenario(write_scenario(text)));
  std::vector<std::string> trace = nvml_trace();
  for (const char* met : {"meet nvmlDeviceGetName 8", "meet nvmlDeviceGetTopologyCommonAncestor 8"})
    EXPECT_EQ(std::count(trace.begin(), trace.end(), met), 1) << met << ": GPUs or pairs were queried one after another";
  std::vector<Gpu> expected;
  for (int i = 0; i < 8; ++i) expected.push_back(a100(i));
  EXPECT_GPUS_EQ(m.gpus, expected);
  ASSERT_EQ(m.pairs.size(), 28u);
  std::size_t i = 0;
  for (int a = 0; a < 8; ++a)
    for (int b = a + 1; b < 8; ++b, ++i) {
      EXPECT_EQ(m.pairs[i].a, a);
      EXPECT_EQ(m.pairs[i].b, b);
      EXPECT_EQ(m.pairs[i].topology, a100_topology(a, b));
    }
}

TEST_F(NvidiaSense, ProblemsComeInGpuOrderWhateverFinishesFirst) {
  // GPU 0 answers last; its Problem still comes first.
  std::string text = scenario_text("a100_nvlink_8") +
                     "fault fn=nvmlDeviceGetName delay_ms=50 gpu=0\n"
                     "fault fn=nvmlDeviceGetPowerManagementLimit code=999\n"
                     "fault fn=nvmlDeviceGetP2PStatus code=999\n";
  Machine m = sense(FakeRun().scenario(write_scenario(text)));
  std::vector<std::string> messages;
  for (const Problem& p : m.nvidia.problems) messages.push_back(p.message.substr(0, p.message.find(" failed")));
  std::vector<std::string> expected;
  for (int g = 0; g < 8; ++g)
    expected.push_back("nvmlDeviceGetPowerManagementLimit(GPU " + std::to_string(g) + ")");
  for (int a = 0; a < 8; ++a)
    for (int b = a + 1; b < 8; ++b)
      for (int twice = 0; twice < 2; ++twice)  // read and NVLink
        expected.push_back("nvmlDeviceGetP2PStatus(GPU " + std::to_string(a) + ", GPU " +
                           std::to_string(b) + ")");
  EXPECT_EQ(messages, expected);
}

// --- health (doctor: SenseOptions::with_health) -----------------------------

constexpr const char* kHealthFunctions[] = {
    "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons",
    "nvmlDeviceGetTemperature",               "nvmlDeviceGetEccMode",
    "nvmlDeviceGetTotalEccErrors",            "nvmlDeviceGetRetiredPagesPendingStatus",
    "nvmlDeviceGetRemappedRows",              "nvmlDeviceGetGpuFabricInfo",
};

Gpu healthy_h200() {
  Gpu g = h200();
  g.health.clock_events = 0x1;  // GPU idle
  g.health.temperature_c = 34;
  g.ecc_enabled = true;
  g.health.ecc_corrected = 0;
  g.health.ecc_uncorrected = 0;
  g.health.row_remap_correctable = 0;
  g.health.row_remap_uncorrectable = 0;
  g.health.row_remap_pending = false;
  g.health.row_remap_failure = false;
  g.fabric_state = "completed";
  g.fabric_status = 0;
  return g;  // retired_pages_pending: Hopper has none (NOT_SUPPORTED)
}

TEST_F(NvidiaSense, HealthOfAWellH200) {
  Machine m = sense(FakeRun().scenario(scenario("h200_health")).with_health());
  EXPECT_GPUS_EQ(m.gpus, std::vector<Gpu>{healthy_h200()});
  EXPECT_TRUE(m.nvidia.problems.empty());
  std::vector<std::string> trace = nvml_trace();
  EXPECT_TRUE(contains(trace, "nvmlDeviceGetCurrentClocksEventReasons"));
  EXPECT_FALSE(contains(trace, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  EXPECT_TRUE(contains(trace, "nvmlDeviceGetRetiredPagesPendingStatus"));  // asked; unsupported
}

// The fast paths (detect's summary, env, explain, run) skip what no rule
// needs: the modes, the power limit, the PCIe link, the max clocks and the
// NVLink links, NVML's slowest queries on an H200.
TEST_F(NvidiaSense, WithoutDetailsSkipsWhatNoRuleNeeds) {
  Machine m = sense(FakeRun().scenario(scenario("h200")).without_details());
  Gpu expected = h200();
  expected.persistence_mode.reset();
  expected.compute_mode.reset();
  expected.power_limit_mw.reset();
  expected.max_sm_clock_mhz.reset();
  expected.max_memory_clock_mhz.reset();
  expected.pcie = {};
  expected.nvlink_active_links.reset();
  EXPECT_GPUS_EQ(m.gpus, std::vector<Gpu>{expected});
  std::vector<std::string> trace = nvml_trace();
  for (const char* fn : {"nvmlDeviceGetPersistenceMode", "nvmlDeviceGetComputeMode",
                         "nvmlDeviceGetPowerManagementLimit", "nvmlDeviceGetMaxClockInfo",
                         "nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration",
                         "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth",
                         "nvmlDeviceGetNvLinkState"})
    EXPECT_FALSE(contains(trace, fn)) << fn;
  // What the rules read is still there.
  EXPECT_TRUE(contains(trace, "nvmlDeviceGetMigMode"));
  EXPECT_TRUE(contains(trace, "nvmlDeviceGetMemoryInfo_v2"));

  m = sense(FakeRun().scenario(scenario("rtx3090_4090")).without_details());
  ASSERT_EQ(m.pairs.size(), 1u);
  EXPECT_EQ(m.pairs[0].p2p_read, "chipset_not_supported");  // the NCCL rule needs it
  EXPECT_EQ(m.pairs[0].p2p_nvlink, std::nullopt);           // only doctor reads it
}

TEST_F(NvidiaSense, DetectDoesNotReadHealth) {
  Machine m = sense(FakeRun().scenario(scenario("h200_health")));
  EXPECT_GPUS_EQ(m.gpus, std::vector<Gpu>{h200()});
  std::vector<std::string> trace = nvml_trace();
  for (const char* fn : kHealthFunctions) EXPECT_FALSE(contains(trace, fn)) << fn;
}

TEST_F(NvidiaSense, HealthOfFourSickH100s) {
  Machine m = sense(FakeRun().scenario(scenario("h100_sick_4")).with_health());
  ASSERT_EQ(m.gpus.size(), 4u);
  EXPECT_TRUE(m.nvidia.problems.empty()) << m.nvidia.problems[0].message;
  const Gpu &hot = m.gpus[0], &capped = m.gpus[1], &pending = m.gpus[2], &failed = m.gpus[3];
  EXPECT_EQ(hot.health.clock_events, clock_event::kSwThermalSlowdown |
                                          clock_event::kHwThermalSlowdown);
  EXPECT_EQ(hot.health.temperature_c, 91);
  EXPECT_EQ(capped.health.clock_events, clock_event::kSwPowerCap);
  EXPECT_EQ(capped.ecc_enabled, true);
  EXPECT_EQ(capped.health.ecc_uncorrected, 2u);
  EXPECT_EQ(pending.health.clock_events, 0u);  // zero is an answer here: no reason
  EXPECT_EQ(pending.health.row_remap_pending, true);
  EXPECT_EQ(pending.health.row_remap_failure, false);
  EXPECT_EQ(pending.fabric_state, "in_progress");
  EXPECT_EQ(pending.fabric_status, std::nullopt);  // meaningful once completed
  EXPECT_EQ(failed.health.row_remap_pending, false);
  EXPECT_EQ(failed.health.row_remap_failure, true);
  EXPECT_EQ(failed.fabric_state, "not_started");
  EXPECT_EQ(failed.compute_mode, "prohibited");
  EXPECT_EQ(failed.ecc_enabled, false);
  EXPECT_EQ(failed.health.ecc_uncorrected, std::nullopt);  // no counts with ECC off
  EXPECT_EQ(failed.health.ecc_corrected, std::nullopt);
  for (const Gpu& g : m.gpus) EXPECT_EQ(g.retired_pages_pending, std::nullopt);
}

// The V100 scenario with every health key: what the driver's functions can tell.
std::string v100_with_health(std::string text) {
  const std::string keys =
      " events=0x4 temp=61 ecc=1/1 ecc_uncorrected=5 retired_pending=1 remap=1/1 fabric=3";
  for (std::size_t at = 0; (at = text.find("migmax=0", at)) != std::string::npos; at += 8)
    text.insert(at + 8, keys);
  return text;
}

TEST_F(NvidiaSense, HealthOnAnOldDriverLeavesItsMissingFunctionsUnknown) {
  Machine m = sense(
      FakeRun().nvml(testing::kOldNvml).scenario(write_scenario(v100_with_health(scenario_text("old_driver")))).with_health());
  ASSERT_EQ(m.gpus.size(), 2u);
  const Gpu& g = m.gpus[0];
  EXPECT_EQ(g.health.clock_events, clock_event::kSwPowerCap);  // the "throttle" name
  EXPECT_EQ(g.health.temperature_c, 61);
  EXPECT_EQ(g.ecc_enabled, true);
  EXPECT_EQ(g.health.ecc_uncorrected, 5u);
  EXPECT_EQ(g.retired_pages_pending, true);
  EXPECT_EQ(g.health.row_remap_pending, std::nullopt);  // R418 has no nvmlDeviceGetRemappedRows
  EXPECT_EQ(g.health.row_remap_failure, std::nullopt);
  EXPECT_EQ(g.fabric_state, std::nullopt);  // nor nvmlDeviceGetGpuFabricInfo
  EXPECT_EQ(g.fabric_status, std::nullopt);
  EXPECT_TRUE(m.nvidia.problems.empty());
  std::vector<std::string> trace = nvml_trace();
  EXPECT_TRUE(contains(trace, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  for (const char* fn : {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetRemappedRows",
                         "nvmlDeviceGetGpuFabricInfo"})
    EXPECT_FALSE(contains(trace, fn)) << fn;
}

TEST_F(NvidiaSense, HealthOnACurrentDriverHasRowRemappingAndFabric) {
  Machine m = sense(FakeRun().scenario(write_scenario(v100_with_health(scenario_text("old_driver")))).with_health());
  ASSERT_EQ(m.gpus.size(), 2u);
  EXPECT_EQ(m.gpus[1].health.row_remap_pending, true);
  EXPECT_EQ(m.gpus[1].health.row_remap_failure, true);
  EXPECT_EQ(m.gpus[1].fabric_state, "completed");
  EXPECT_EQ(m.gpus[1].fabric_status, 0);
}

TEST_F(NvidiaSense, HealthNotSupportedIsQuietOtherFailuresAreProblems) {
  std::string text = scenario_text("h200_health") +
                     "fault fn=nvmlDeviceGetGpuFabricInfo code=3 gpu=0\n"  // NOT_SUPPORTED
                     "fault fn=nvmlDeviceGetEccMode code=3 gpu=0\n"
                     "fault fn=nvmlDeviceGetTemperature code=4 gpu=0\n";  // NO_PERMISSION
  Machine m = sense(FakeRun().scenario(write_scenario(text)).with_health());
  Gpu expected = healthy_h200();
  expected.fabric_state = std::nullopt;
  expected.fabric_status = std::nullopt;
  expected.ecc_enabled = std::nullopt;  // its counts are still read
  expected.health.temperature_c = std::nullopt;
  EXPECT_GPUS_EQ(m.gpus, std::vector<Gpu>{expected});
  ASSERT_EQ(codes(m.nvidia.problems), std::vector<std::string>{"nvml_no_permission"});
  EXPECT_EQ(m.nvidia.problems[0].message.find("nvmlDeviceGetTemperature(GPU 0) failed: "), 0u);
}

TEST_F(NvidiaSense, HealthOfALostGpuIsNotRead) {
  std::string text = scenario_text("h200_health") + "fault lost=0 after=12\n";
  Machine m = sense(FakeRun().scenario(write_scenario(text)).with_health());
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_TRUE(m.gpus[0].problem.has_value());
  EXPECT_EQ(m.gpus[0].fabric_state, std::nullopt);
  EXPECT_EQ(m.gpus[0].health.temperature_c, std::nullopt);
}

}  // namespace
}  // namespace gpuenv

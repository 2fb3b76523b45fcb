#include "model/snapshot.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpuenv {
namespace {

// Every optional set, every list non-empty.
Gpu full_gpu() {
  Gpu g;
  g.index = 1;
  g.name = "NVIDIA H100 80GB HBM3";
  g.uuid = "GPU-00000000-0000-4000-8000-000000000001";
  g.pci_bus_id = "00000000:1B:00.0";
  g.compute_capability = ComputeCapability{9, 0};
  g.memory_total_bytes = 85520809984ull;
  g.memory_free_bytes = 84987281408ull;
  g.mig_enabled = true;
  g.mig_devices = {
      {0, "MIG-00000000-0000-4000-8000-0000000000a0", "NVIDIA H100 MIG 1g.10gb", 10200547328ull, 9, 0}};
  g.persistence_mode = false;
  g.compute_mode = "exclusive_process";
  g.pcie = {4, 5, 8, 16};
  g.power_limit_mw = 700000;
  g.max_sm_clock_mhz = 1980;
  g.max_memory_clock_mhz = 2619;
  g.nvlink_active_links = 18;
  g.cpu_affinity = std::vector<int>{0, 1, 2, 3};
  g.numa_node = 0;
  g.multiprocessor_count = 132;
  g.health.clock_events = 0x40 | 0x4;
  g.health.temperature_c = -5;
  g.ecc_enabled = true;
  g.health.ecc_uncorrected = 3;
  g.retired_pages_pending = false;
  g.health.row_remap_pending = true;
  g.health.row_remap_failure = false;
  g.fabric_state = "not_started";
  g.fabric_status = 999;
  g.problem = Problem{"nvml", "gpu_lost", "nvmlDeviceGetMemoryInfo(1): GPU is lost", "reboot"};
  return g;
}

Host full_host() {
  Host h;
  h.hostname = "node7";
  h.product_name = "PowerEdge R750xa";
  h.online_cpus = 8;
  h.affinity_cpus = std::vector<int>{0, 1, 2, 3};
  h.cgroup_cpu_quota = 2.5;
  h.usable_cpus = 3;
  h.memory_total_bytes = 68719476736ull;
  h.cgroup_memory_limit_bytes = 17179869184ull;
  h.numa_nodes = {{0, {0, 1, 2, 3}, 34359738368ull}, {1, {4, 5, 6, 7}, std::nullopt}};
  h.shm_bytes = 67108864;
  h.container = "docker";
  h.nvidia_device_nodes = {"/dev/nvidia0", "/dev/nvidiactl"};
  h.ib_devices = {{"mlx5_0", "InfiniBand", "4: ACTIVE"}};
  h.interfaces = {{"lo", true, true, false}, {"eth0", false, false, true}};
  h.memlock_bytes = UINT64_MAX;
  h.problems = {{"host", "cgroup_unreadable", "open(/sys/fs/cgroup/cpu.max): EACCES", "run as root"}};
  return h;
}

Machine full_machine() {
  Machine m;
  m.gpuenv_version = "0.1.0";
  m.sensed_at = "2026-11-29T12:00:00Z";
  m.nvidia.nvml_library = "libnvidia-ml.so.1";
  m.nvidia.driver_version = "580.95.05";
  m.nvidia.cuda_driver_version = 13000;
  m.nvidia.cuda_library = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
  m.nvidia.cuda_init_result = 999;
  m.nvidia.problems = {{"cuda", "cuda_init_failed", "cuInit: 999", "check dmesg"}};
  m.gpus = {full_gpu()};
  m.pairs = {{0, 1, "system", "chipset_not_supported", "not_supported"}};
  m.host = full_host();
  Torch t;
  t.version = "2.11.0+cu130";
  t.cuda_version = "13.0";
  t.path = "/venv/lib/python3.12/site-packages/torch";
  t.python = "/venv/bin/python3";
  t.bytecode_cached = false;
  t.libtorch_cuda = CudaBinary{t.path.value() + "/lib/libtorch_cuda.so", "torch",
                               {"compute_120", "sm_90", "sm_90a"}, std::nullopt, "torch"};
  t.extensions = {{"/venv/lib/python3.12/site-packages/flash_attn_2_cuda.so", std::nullopt, {},
                   "offset 0x40: truncated", std::nullopt}};
  m.torch = t;
  m.env = {{"CUDA_VISIBLE_DEVICES", "1"}, {"LOCAL_RANK", "0"}};
  m.base_image_env = {{"TORCH_CUDA_ARCH_LIST", "8.0 9.0+PTX"}};
  Measurement p2p;
  p2p.key = "p2p";
  p2p.gpu_uuid = *m.gpus[0].uuid;
  p2p.peer_uuid = "GPU-00000000-0000-4000-8000-000000000002";
  p2p.value = 361.5;
  p2p.unit = "GB/s";
  p2p.peak = 450.0;
  p2p.detail = "cudaMemcpyPeerAsync, 256 MiB, median of 5";
  p2p.measured_at = "2026-11-29T12:05:00Z";
  p2p.gpuenv_version = "0.1.0";
  m.measurements = {p2p};
  return m;
}

Machine round_trip(const Machine& m) {
  Machine back;
  std::string err;
  EXPECT_TRUE(machine_from_json(machine_to_json(m), &back, &err)) << err;
  return back;
}

TEST(Snapshot, FullMachineRoundTrips) {
  Machine m = full_machine();
  EXPECT_EQ(round_trip(m), m);
}

TEST(Snapshot, EmptyMachineRoundTrips) {
  Machine m;
  EXPECT_EQ(round_trip(m), m);
}

TEST(Snapshot, UnknownIsWrittenAsNull) {
  auto j = nlohmann::json::parse(machine_to_json(Machine{}));
  EXPECT_TRUE(j["host"]["online_cpus"].is_null());
  EXPECT_TRUE(j["torch"].is_null());
  EXPECT_EQ(j["schema_version"], kSnapshotSchemaVersion);
}

TEST(Snapshot, AnUnknownProductNameIsLeftOut) {
  Machine m = full_machine();
  EXPECT_NE(machine_to_json(m, -1).find("\"product_name\":\"PowerEdge R750xa\""), std::string::npos);
  m.host.product_name.reset();
  EXPECT_EQ(machine_to_json(m).find("product_name"), std::string::npos);
  EXPECT_EQ(round_trip(m), m);
}

// The snapshot's health keys keep their names (docs/snapshot.md) whatever
// GpuHealth calls them; the counts a snapshot never held (corrected ECC
// errors, rows remapped) stay out of it.
TEST(Snapshot, HealthKeepsItsKeys) {
  Machine m;
  m.gpus = {full_gpu()};
  m.gpus[0].health.ecc_corrected = 7;
  m.gpus[0].health.row_remap_correctable = 1;
  m.gpus[0].health.row_remap_uncorrectable = 2;
  auto g = nlohmann::json::parse(machine_to_json(m))["gpus"][0];
  EXPECT_EQ(g["clocks_event_reasons"], 0x40 | 0x4);
  EXPECT_EQ(g["temperature_c"], -5);
  EXPECT_EQ(g["ecc_enabled"], true);
  EXPECT_EQ(g["ecc_uncorrected_volatile"], 3);
  EXPECT_EQ(g["retired_pages_pending"], false);
  EXPECT_EQ(g["row_remap_pending"], true);
  EXPECT_EQ(g["row_remap_failure"], false);
  for (const char* gone : {"health", "clock_events", "ecc_uncorrected", "ecc_corrected", "row_remap_correctable",
                           "row_remap_uncorrectable"})
    EXPECT_FALSE(g.contains(gone)) << gone;
  Machine back = round_trip(m);
  EXPECT_EQ(back.gpus[0].health.ecc_corrected, std::nullopt);
  back.gpus[0].health.ecc_corrected = 7;
  back.gpus[0].health.row_remap_correctable = 1;
  back.gpus[0].health.row_remap_uncorrectable = 2;
  EXPECT_EQ(back, m);
}

TEST(Snapshot, UnknownFieldsAreIgnored) {
  Machine m;
  std::string err;
  ASSERT_TRUE(machine_from_json(R"({"schema_version": 1, "from_the_future": {"x": [1]},
                                    "host": {"online_cpus": 4, "new_field": true}})",
                                &m, &err))
      << err;
  EXPECT_EQ(m.host.online_cpus, 4);
}

// A snapshot that parses nowhere near: the message names the field.
struct Hostile {
  const char* description;
  std::string json;
  std::string error;  // a part of the message
};

std::string with(const std::string& body) { return R"({"schema_version": 1, )" + body + "}"; }
std::string gpu(const std::string& fields) { return with(R"("gpus": [{"index": 0, )" + fields + "}]"); }

TEST(Snapshot, HostileSnapshotsNameTheField) {
  std::vector<Hostile> rows = {
      {"not JSON", "{", "not valid JSON"},
      {"a number no double holds", with(R"("host": {"cgroup_cpu_quota": 1e999})"), "not valid JSON"},
      {"not an object", "[1, 2]", "snapshot: expected a JSON object, got array"},
      {"a string", R"("machine")", "snapshot: expected a JSON object, got string"},
      {"no schema_version", "{}", "snapshot: schema_version is missing"},
      {"newer schema", R"({"schema_version": 2})",
       "schema_version: version 2 is newer than this gpuenv understands (1); upgrade gpuenv"},
      {"schema_version as text", R"({"schema_version": "1"})",
       "schema_version: expected an integer, got string"},
      {"schema_version 0", R"({"schema_version": 0})", "schema_version: value 0 out of range"},
      {"name is a number", gpu(R"("name": 5)"), "gpus[0].name: expected a string, got number"},
      {"cc without a dot", gpu(R"("compute_capability": "9")"),
       R"(gpus[0].compute_capability: expected "MAJOR.MINOR" such as "9.0", got "9")"},
      {"cc as a number", gpu(R"("compute_capability": 9.0)"),
       "gpus[0].compute_capability: expected a string, got number"},
      {"cc with letters", gpu(R"("compute_capability": "9.a")"), R"(got "9.a")"},
      {"negative memory", gpu(R"("memory_total_bytes": -1)"),
       "gpus[0].memory_total_bytes: expected a non-negative integer, got number"},
      {"fractional memory", gpu(R"("memory_total_bytes": 1.5)"),
       "gpus[0].memory_total_bytes: expected a non-negative integer"},
      {"negative index", with(R"("gpus": [{"index": -1}])"), "gpus[0].index: value -1 out of range"},
      {"index missing", with(R"("gpus": [{}])"), "gpus[0].index: expected an integer, got null"},
      {"power beyond 32 bits", gpu(R"("power_limit_mw": 5000000000)"),
       "gpus[0].power_limit_mw: value out of range"},
      {"negative power", gpu(R"("power_limit_mw": -5)"), "gpus[0].power_limit_mw: value -5 out of range"},
      {"negative CPU in affinity", gpu(R"("cpu_affinity": [0, -3])"),
       "gpus[0].cpu_affinity[1]: value -3 out of range"},
      {"negative NVLink count", gpu(R"("nvlink_active_links": -2)"),
       "gpus[0].nvlink_active_links: value -2 out of range"},
      {"negative CPU count", with(R"("host": {"online_cpus": -4})"), "host.online_cpus: value -4 out of range"},
      {"mig_enabled as text", gpu(R"("mig_enabled": "yes")"),
       "gpus[0].mig_enabled: expected true or false, got string"},
      {"MIG device without UUID", gpu(R"("mig_devices": [{"index": 0}])"),
       "gpus[0].mig_devices[0].uuid: expected a string"},
      {"pcie not an object", gpu(R"("pcie": 4)"), "gpus[0].pcie: expected an object, got number"},
      {"gpus not a list", with(R"("gpus": {})"), "gpus: expected an array, got object"},
      {"pair without b", with(R"("pairs": [{"a": 0}])"), "pairs[0].b: expected an integer, got null"},
      {"quota as text", with(R"("host": {"cgroup_cpu_quota": "2"})"),
       "host.cgroup_cpu_quota: expected a number, got string"},
      {"NUMA CPUs not a list", with(R"("host": {"numa_nodes": [{"index": 0, "cpus": 3}]})"),
       "host.numa_nodes[0].cpus: expected an array, got number"},
      {"interface without a name", with(R"("host": {"interfaces": [{"up": true}]})"),
       "host.interfaces[0].name: expected a string, got null"},
      {"problem without a code", with(R"("host": {"problems": [{"source": "host"}]})"),
       "host.problems[0].code: expected a string, got null"},
      {"nvidia is a list", with(R"("nvidia": [])"), "nvidia: expected an object, got array"},
      {"torch without version", with(R"("torch": {})"), "torch.version: expected a string, got null"},
      {"env value not a string", with(R"("env": {"LOCAL_RANK": 0})"),
       "env.LOCAL_RANK: expected a string, got number"},
      {"env not an object", with(R"("env": ["A=1"])"), "env: expected an object of strings"},
      {"measurement without a key", with(R"("measurements": [{"unit": "GB/s"}])"), "measurements[0].key: missing"},
  };
  for (const auto& row : rows) {
    Machine m;
    std::string err;
    EXPECT_FALSE(machine_from_json(row.json, &m, &err)) << row.description;
    EXPECT_NE(err.find(row.error), std::string::npos) << row.description << ": got \"" << err << "\"";
  }
}

// Issue 12: the parser kept the last of two equal keys in silence, so a
// snapshot could say one thing to a reader and another to gpuenv.
TEST(Snapshot, AKeyGivenTwiceIsRefusedWithItsPlace) {
  std::vector<Hostile> rows = {
      {"at the top", R"({"schema_version": 1, "schema_version": 1})",
       R"(snapshot: the key "schema_version" is given twice)"},
      {"in the second GPU", with(R"("gpus": [{"index": 0}, {"index": 1, "name": "a", "name": "b"}])"),
       R"(gpus[1]: the key "name" is given twice)"},
      {"deeper, after arrays of objects and numbers",
       with(R"("host": {"numa_nodes": [{"index": 0, "cpus": [0, 1]}]}, "gpus": [{"index": 0,
               "cpu_affinity": [0, 1], "pcie": {"gen_max": 4, "gen_max": 5}}])"),
       R"(gpus[0].pcie: the key "gen_max" is given twice)"},
      {"in env", with(R"("env": {"CUDA_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": "1"})"),
       R"(env: the key "CUDA_VISIBLE_DEVICES" is given twice)"},
  };
  for (const auto& row : rows) {
    Machine m;
    std::string err;
    EXPECT_FALSE(machine_from_json(row.json, &m, &err)) << row.description;
    EXPECT_EQ(err, row.error) << row.description;
  }
  Machine m;
  std::string err;  // the same key in two objects is no repeat
  EXPECT_TRUE(machine_from_json(with(R"("gpus": [{"index": 0}, {"index": 1}])"), &m, &err)) << err;
}

std::string gpus_json(std::size_t n, const std::string& fields = "") {
  std::string out = R"({"schema_version": 1, "gpus": [)";
  for (std::size_t i = 0; i < n; ++i)
    out += (i ? "," : "") + std::string(R"({"index": )") + std::to_string(i) + fields + "}";
  return out + "]}";
}

std::string mig_json(std::size_t n) {
  std::string out = R"(, "mig_enabled": true, "mig_devices": [)";
  for (std::size_t i = 0; i < n; ++i)
    out += (i ? "," : "") + std::string(R"({"index": )") + std::to_string(i) + R"(, "uuid": "MIG-)" +
           std::to_string(i) + R"("})";
  return out + "]";
}

TEST(Snapshot, GpuAndMigDeviceCountsAreBounded) {
  Machine m;
  std::string err;
  ASSERT_TRUE(machine_from_json(gpus_json(kMaxSnapshotGpus), &m, &err)) << err;
  EXPECT_EQ(m.gpus.size(), kMaxSnapshotGpus);
  EXPECT_FALSE(machine_from_json(gpus_json(kMaxSnapshotGpus + 1), &m, &err));
  EXPECT_EQ(err, "gpus: 4097 GPUs, more than the 4096 a snapshot may hold");
  ASSERT_TRUE(machine_from_json(gpus_json(1, mig_json(kMaxSnapshotMigDevices)), &m, &err)) << err;
  EXPECT_FALSE(machine_from_json(gpus_json(1, mig_json(kMaxSnapshotMigDevices + 1)), &m, &err));
  EXPECT_EQ(err, "gpus[0].mig_devices: 4097 MIG devices, more than the 4096 a snapshot may hold");
  EXPECT_FALSE(machine_from_json(gpus_json(2, mig_json(kMaxSnapshotMigDevices / 2 + 1)), &m, &err));
  EXPECT_EQ(err, "gpus[1].mig_devices: more than 4096 MIG devices in all, the most a snapshot may hold");
}

}  // namespace
}  // namespace gpuenv

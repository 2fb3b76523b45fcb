// GFD's labels, proved against GFD's own tests: each row is a test case of
// NVIDIA/k8s-device-plugin's internal/lm, its machine built as a gpuenv
// Machine (GFD's mocks: internal/resource/testing/resource-testing.go) and
// its expected labels copied as they are. What is compared is the labels
// the GFD labeler under test writes (its "domain"), both ways: a label GFD
// expects and gpuenv lacks fails, and so does one gpuenv adds.
//
// Sources (read with the search tools; facts, not code):
//   resource_test.go   TestGPUResourceLabeler, TestMigResourceLabeler, TestGetProductName,
//                      TestSanitise (the version with gpu.sharing-strategy and MPS rows)
//   mig-strategy_test.go  TestMigStrategyNoneLabels, TestMigStrategySingleLabels (commit
//                      339b0c2a, before gpu.sharing-strategy: that label is not compared there)
//   nvml_test.go       TestMigCapabilityLabeler, TestSharingLabeler (commit 0048278d)
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>

#include "decide/labels/labelers.h"
#include "decide/node_labels.h"

namespace gpuenv {
namespace {

// ---- GFD's mocks as Machines ----------------------------------------------

// rt.NewFullGPU(): MOCKMODEL, compute 8.0, 300 MiB, not MIG capable, class 0x030000.
Gpu full_gpu() {
  Gpu g;
  g.name = "MOCKMODEL";
  g.compute_capability = ComputeCapability{8, 0};
  g.memory_total_bytes = 300ull << 20;
  g.pci_class = "0x030000";
  return g;
}

// rt.NewMigDevice(gi, ci, gb, attributes): named "<gi>g.<gb>gb"; memory gb
// (as MiB), the slices gi and ci, every other attribute 0 unless given.
MigDevice mig_device(int gi, int ci, int gb, const std::function<void(MigAttributes&)>& more = nullptr) {
  char profile[32];
  std::snprintf(profile, sizeof profile, "%dg.%dgb", gi, gb);
  MigDevice d;
  d.name = std::string("MOCKMODEL MIG ") + profile;
  MigAttributes a;
  a.gpu_instance_slices = gi, a.compute_instance_slices = ci, a.memory_mib = static_cast<std::uint64_t>(gb);
  if (more) more(a);
  d.attributes = a;
  return d;
}

// rt.NewMigEnabledDevice(migs...): MIG mode on (and capable), compute 0.0
// (no capability: no architecture labels), 300 MiB.
Gpu mig_enabled(std::vector<MigDevice> migs = {}) {
  Gpu g;
  g.name = "MOCKMODEL";
  g.memory_total_bytes = 300ull << 20;
  g.mig_enabled = true;
  g.mig_devices = std::move(migs);
  g.pci_class = "0x030000";
  return g;
}

// rt.NewManagerMockWithDevices: driver 400.300, CUDA 8.0.
Machine mock(std::vector<Gpu> gpus) {
  Machine m;
  m.nvidia.driver_version = "400.300";
  m.nvidia.cuda_driver_version = 8000;
  for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i].index = static_cast<int>(i);
  m.gpus = std::move(gpus);
  return m;
}

DevicePluginConfig strategy(const std::string& s, std::vector<ReplicatedResource> time_slicing = {}) {
  DevicePluginConfig c;
  c.mig_strategy = s;
  c.time_slicing = std::move(time_slicing);
  return c;
}

DevicePluginConfig time_slicing(std::vector<ReplicatedResource> rs) {
  DevicePluginConfig c;
  c.time_slicing = std::move(rs);
  return c;
}

DevicePluginConfig mps(std::vector<ReplicatedResource> rs) {
  DevicePluginConfig c;
  c.mps = std::move(rs);
  return c;
}

// ---- which labels a row compares -------------------------------------------

using Domain = std::function<bool(const std::string&)>;

// NewResourceLabeler's: gpu.* (but the machine and mode labelers'), mig.strategy, mig-*.
bool resources(const std::string& k) {
  return (k.rfind("gpu.", 0) == 0 && k != "gpu.machine" && k != "gpu.mode") || k == "mig.strategy" ||
         k.rfind("mig-", 0) == 0;
}
// The same, before gpu.sharing-strategy existed.
bool resources_before_sharing(const std::string& k) { return resources(k) && k != "gpu.sharing-strategy"; }
// A full GPU's or one MIG profile's labels (NewGPUResourceLabeler, NewMIGResourceLabeler).
bool gpu_resource(const std::string& k) { return resources(k) && k != "mig.strategy"; }
Domain only(std::string key) {
  return [key](const std::string& k) { return k == key; };
}

struct LabelerRow {
  std::string source;  // GFD's test and case
  Machine machine;
  std::optional<DevicePluginConfig> config;
  Domain domain;
  NodeLabels expected;  // GFD's expectedLabels, "nvidia.com/" taken off
};

NodeLabels gfd(const Machine& m, const std::optional<DevicePluginConfig>& config) {
  LabelOptions o;
  o.ns = LabelNamespace::kNvidia;
  o.device_plugin = config;
  return node_label_set(m, std::nullopt, o).nvidia;
}

void check(const std::vector<LabelerRow>& rows) {
  for (const LabelerRow& r : rows) {
    NodeLabels got;
    for (const auto& [k, v] : gfd(r.machine, r.config))
      if (r.domain(k)) got[k] = v;
    EXPECT_EQ(got, r.expected) << r.source;
  }
}

// A MIG profile's labels as GFD's tests expect them, `prefix` "gpu." or "mig-1g.1gb.".
NodeLabels mig_labels(const std::string& prefix, const NodeLabels& base) {
  NodeLabels l = base;
  for (const char* k : {"multiprocessors", "engines.copy", "engines.decoder", "engines.encoder", "engines.jpeg",
                        "engines.ofa"})
    l.emplace(prefix + k, "0");
  return l;
}

// ---- resource_test.go ------------------------------------------------------

TEST(GfdLabels, TestGPUResourceLabeler) {
  auto labels = [](const char* replicas, const char* strategy, const char* product) {
    return NodeLabels{{"gpu.count", "1"},          {"gpu.replicas", replicas},   {"gpu.sharing-strategy", strategy},
                      {"gpu.memory", "300"},        {"gpu.product", product},     {"gpu.family", "ampere"},
                      {"gpu.compute.major", "8"},   {"gpu.compute.minor", "0"}};
  };
  const std::string t = "resource_test.go TestGPUResourceLabeler: ";
  check({
      {t + "zero count returns empty", mock({}), DevicePluginConfig{}, gpu_resource, {}},
      {t + "no sharing", mock({full_gpu()}), DevicePluginConfig{}, gpu_resource, labels("1", "none", "MOCKMODEL")},
      {t + "time-slicing ignores non-matching resource", mock({full_gpu()}),
       time_slicing({{"nvidia.com/not-gpu", "", 2}}), gpu_resource, labels("1", "none", "MOCKMODEL")},
      {t + "time-slicing appends suffix and doubles count", mock({full_gpu()}), time_slicing({{"nvidia.com/gpu", "", 2}}),
       gpu_resource, labels("2", "time-slicing", "MOCKMODEL-SHARED")},
      {t + "time-slicing renamed does not append suffix and doubles count", mock({full_gpu()}),
       time_slicing({{"nvidia.com/gpu", "nvidia.com/gpu.shared", 2}}), gpu_resource,
       labels("2", "time-slicing", "MOCKMODEL")},
      {t + "mps ignores non-matching resource", mock({full_gpu()}), mps({{"nvidia.com/not-gpu", "", 2}}),
       gpu_resource, labels("1", "none", "MOCKMODEL")},
      {t + "mps appends suffix and doubles count", mock({full_gpu()}), mps({{"nvidia.com/gpu", "", 2}}),
       gpu_resource, labels("2", "mps", "MOCKMODEL-SHARED")},
      {t + "mps renamed does not append suffix and doubles count", mock({full_gpu()}),
       mps({{"nvidia.com/gpu", "nvidia.com/gpu.shared", 2}}), gpu_resource, labels("2", "mps", "MOCKMODEL")},
  });
}

// device := rt.NewMigDevice(1, 2, 300) on a MIG-enabled parent, labelled as
// the resource nvidia.com/gpu: a machine in MIG mode under the single
// strategy. (The test's two "mig mixed" cases label that device under the
// resource name nvidia.com/mig-1g.1gb, which is not its profile: no machine
// gives that pairing, so they are not rows here; GfdLabels.MixedStrategy
// checks the mig-<profile>.* labels.)
TEST(GfdLabels, TestMigResourceLabeler) {
  Machine m = mock({mig_enabled({mig_device(1, 2, 300)})});
  auto labels = [](const char* replicas, const char* strategy, const char* product) {
    return mig_labels("gpu.", {{"gpu.count", "1"},
                               {"gpu.replicas", replicas},
                               {"gpu.sharing-strategy", strategy},
                               {"gpu.memory", "300"},
                               {"gpu.product", product},
                               {"gpu.slices.gi", "1"},
                               {"gpu.slices.ci", "2"}});
  };
  const std::string t = "resource_test.go TestMigResourceLabeler: ";
  check({
      {t + "no sharing", m, strategy("single"), gpu_resource, labels("1", "none", "MOCKMODEL-MIG-1g.300gb")},
      {t + "shared appends suffix and doubles count", m, strategy("single", {{"nvidia.com/gpu", "", 2}}),
       gpu_resource, labels("2", "time-slicing", "MOCKMODEL-MIG-1g.300gb-SHARED")},
      {t + "renamed does not append suffix and doubles count", m,
       strategy("single", {{"nvidia.com/gpu", "nvidia.com/gpu.shared", 2}}), gpu_resource,
       labels("2", "time-slicing", "MOCKMODEL-MIG-1g.300gb")},
  });
}

// getProductName, through the machines that carry such names.
TEST(GfdLabels, TestGetProductName) {
  const std::string long_model = "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition";  // 55
  auto product = [](const std::string& model, const std::string& profile, bool shared) {
    Gpu g = full_gpu();
    g.name = model;
    if (!profile.empty()) {
      MigDevice d;
      d.name = model + " MIG " + profile;
      g.mig_enabled = true, g.mig_devices = {d};
    }
    DevicePluginConfig c = strategy("single");
    if (shared) c.time_slicing = {{"nvidia.com/gpu", "", 2}};
    return gfd(mock({g}), c).at("gpu.product");
  };
  EXPECT_EQ(product("MOCKMODEL", "1g.300gb", false), "MOCKMODEL-MIG-1g.300gb");
  EXPECT_EQ(product("MOCKMODEL", "", false), "MOCKMODEL");
  EXPECT_EQ(product(long_model, "1g.24gb", false), "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edi-MIG-1g.24gb");
  EXPECT_EQ(product(long_model, "1g.24gb+me", false), "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-MIG-1g.24gb.me");
  EXPECT_EQ(product(std::string(51, 'A') + "." + std::string(10, 'B'), "1g.5gb", false),
            std::string(51, 'A') + "-MIG-1g.5gb");
  EXPECT_EQ(product(std::string(80, 'A'), "", false), std::string(63, 'A'));
  EXPECT_EQ(product(long_model, "1g.24gb", true), "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstat-MIG-1g.24gb-SHARED");
}

TEST(GfdLabels, TestSanitise) {
  EXPECT_EQ(gfd_sanitise("a space separated string"), "a-space-separated-string");
  EXPECT_EQ(gfd_sanitise("some(thing)else"), "somethingelse");
  EXPECT_EQ(gfd_sanitise("some ( thing )else"), "some-thing-else");
  EXPECT_EQ(gfd_sanitise("NVIDIA-TITAN-X-(Pascal)"), "NVIDIA-TITAN-X-Pascal");
  EXPECT_EQ(gfd_sanitise(" input  with multiple   spaces   "), "input-with-multiple-spaces");
  EXPECT_EQ(gfd_sanitise("some [ / thing / ]else"), "some-thing-else");
  EXPECT_EQ(gfd_sanitise("some / thing /else"), "some-thing-else");
  EXPECT_EQ(gfd_sanitise("some-thing.else_new"), "some-thing.else_new");
}

// ---- mig-strategy_test.go --------------------------------------------------

TEST(GfdLabels, TestMigStrategyNoneLabels) {
  const ReplicatedResource two{"nvidia.com/gpu", "", 2};
  const NodeLabels arch = {{"gpu.compute.major", "8"}, {"gpu.compute.minor", "0"}, {"gpu.family", "ampere"}};
  auto with = [&](NodeLabels l, bool with_arch) {
    if (with_arch) l.insert(arch.begin(), arch.end());
    return l;
  };
  const std::string t = "mig-strategy_test.go TestMigStrategyNoneLabels: ";
  check({
      {t + "no devices returns empty labels", mock({}), strategy("none"), resources_before_sharing, {}},
      {t + "single non-mig device returns non-mig (none) labels", mock({full_gpu()}), strategy("none"),
       resources_before_sharing,
       with({{"gpu.count", "1"}, {"gpu.replicas", "1"}, {"gpu.memory", "300"}, {"gpu.product", "MOCKMODEL"}}, true)},
      {t + "sharing is applied to single device", mock({full_gpu()}), strategy("none", {two}), resources_before_sharing,
       with({{"gpu.count", "1"}, {"gpu.replicas", "2"}, {"gpu.memory", "300"}, {"gpu.product", "MOCKMODEL-SHARED"}},
            true)},
      {t + "sharing is applied to multiple devices", mock({full_gpu(), full_gpu()}), strategy("none", {two}),
       resources_before_sharing,
       with({{"gpu.count", "2"}, {"gpu.replicas", "2"}, {"gpu.memory", "300"}, {"gpu.product", "MOCKMODEL-SHARED"}},
            true)},
      {t + "sharing is not applied to single MIG device; replicas is zero", mock({mig_enabled()}),
       strategy("none", {two}), resources_before_sharing,
       {{"gpu.count", "1"}, {"gpu.replicas", "0"}, {"gpu.memory", "300"}, {"gpu.product", "MOCKMODEL"}}},
      {t + "sharing is not applied to muliple MIG device; replicas is zero", mock({mig_enabled(), mig_enabled()}),
       strategy("none", {two}), resources_before_sharing,
       {{"gpu.count", "2"}, {"gpu.replicas", "0"}, {"gpu.memory", "300"}, {"gpu.product", "MOCKMODEL"}}},
      {t + "sharing is applied to MIG device and non-MIG device", mock({mig_enabled(), full_gpu()}),
       strategy("none", {two}), resources_before_sharing,
       with({{"gpu.count", "2"}, {"gpu.replicas", "2"}, {"gpu.memory", "300"}, {"gpu.product", "MOCKMODEL-SHARED"}},
            true)},
  });
}

TEST(GfdLabels, TestMigStrategySingleLabels) {
  const NodeLabels arch = {{"gpu.compute.major", "8"}, {"gpu.compute.minor", "0"}, {"gpu.family", "ampere"}};
  auto with = [](NodeLabels l, const NodeLabels& more) {
    l.insert(more.begin(), more.end());
    return l;
  };
  const NodeLabels invalid = {{"gpu.count", "0"},
                              {"gpu.replicas", "0"},
                              {"gpu.memory", "0"},
                              {"gpu.product", "MOCKMODEL-MIG-INVALID"},
                              {"mig.strategy", "single"}};
  auto attrs = [](MigAttributes& a) {
    a.multiprocessors = 12, a.copy_engines = 13, a.decoders = 14, a.encoders = 15, a.jpeg_decoders = 16, a.ofas = 17;
  };
  const std::string t = "mig-strategy_test.go TestMigStrategySingleLabels: ";
  const DevicePluginConfig single = strategy("single");
  check({
      {t + "no devices returns empty labels", mock({}), single, resources_before_sharing, {}},
      {t + "single non-mig device returns non-mig (none) labels", mock({full_gpu()}), single, resources_before_sharing,
       with({{"gpu.count", "1"}, {"gpu.replicas", "1"}, {"gpu.memory", "300"}, {"gpu.product", "MOCKMODEL"},
             {"mig.strategy", "single"}},
            arch)},
      {t + "multiple non-mig device returns non-mig (none) labels", mock({full_gpu(), full_gpu()}), single,
       resources_before_sharing,
       with({{"gpu.count", "2"}, {"gpu.replicas", "1"}, {"gpu.memory", "300"}, {"gpu.product", "MOCKMODEL"},
             {"mig.strategy", "single"}},
            arch)},
      {t + "single mig-enabled device returns mig labels", mock({mig_enabled({mig_device(1, 2, 100)})}), single,
       resources_before_sharing,
       mig_labels("gpu.", {{"gpu.count", "1"},
                           {"gpu.replicas", "1"},
                           {"gpu.memory", "100"},
                           {"gpu.product", "MOCKMODEL-MIG-1g.100gb"},
                           {"mig.strategy", "single"},
                           {"gpu.slices.gi", "1"},
                           {"gpu.slices.ci", "2"}})},
      {t + "multiple mig-enabled devices returns mig labels",
       mock({mig_enabled({mig_device(1, 2, 100, attrs)}), mig_enabled({mig_device(1, 2, 100, attrs)})}), single,
       resources_before_sharing,
       {{"gpu.count", "2"},
        {"gpu.replicas", "1"},
        {"gpu.memory", "100"},
        {"gpu.product", "MOCKMODEL-MIG-1g.100gb"},
        {"mig.strategy", "single"},
        {"gpu.multiprocessors", "12"},
        {"gpu.slices.gi", "1"},
        {"gpu.slices.ci", "2"},
        {"gpu.engines.copy", "13"},
        {"gpu.engines.decoder", "14"},
        {"gpu.engines.encoder", "15"},
        {"gpu.engines.jpeg", "16"},
        {"gpu.engines.ofa", "17"}}},
      {t + "empty mig devices returns MIG invalid label", mock({mig_enabled()}), single, resources_before_sharing,
       invalid},
      {t + "mixed mig config returns MIG invalid label",
       mock({mig_enabled({mig_device(1, 2, 100), mig_device(3, 4, 100)})}), single, resources_before_sharing, invalid},
      {t + "mixed mig enabled and disabled returns invalid config",
       mock({mig_enabled({mig_device(1, 2, 100)}), full_gpu()}), single, resources_before_sharing,
       with(invalid, arch)},
      {t + "enabled, disabled, and empty returns invalid config",
       mock({mig_enabled({mig_device(1, 2, 100)}), full_gpu(), mig_enabled()}), single, resources_before_sharing,
       with(invalid, arch)},
  });
}

// ---- nvml_test.go ------------------------------------------------------------

TEST(GfdLabels, TestMigCapabilityLabeler) {
  const std::string t = "nvml_test.go TestMigCapabilityLabeler: ";
  check({
      {t + "no devices returns empty labels", mock({}), std::nullopt, only("mig.capable"), {}},
      {t + "single non-mig capable device returns mig.capable as false", mock({full_gpu()}), std::nullopt,
       only("mig.capable"), {{"mig.capable", "false"}}},
      {t + "multiple non-mig capable devices returns mig.capable as false", mock({full_gpu(), full_gpu()}),
       std::nullopt, only("mig.capable"), {{"mig.capable", "false"}}},
      {t + "single mig capable device returns mig.capable as true", mock({mig_enabled()}), std::nullopt,
       only("mig.capable"), {{"mig.capable", "true"}}},
      {t + "one mig capable device among multiple returns mig.capable as true", mock({full_gpu(), mig_enabled()}),
       std::nullopt, only("mig.capable"), {{"mig.capable", "true"}}},
  });
}

// The MPS rows' resources have no name, as in GFD's test: replicas alone
// make the sharing MPS.
TEST(GfdLabels, TestSharingLabeler) {
  const std::string t = "nvml_test.go TestSharingLabeler: ";
  Gpu off = full_gpu(), on = mig_enabled();
  check({
      {t + "nil config", mock({off}), std::nullopt, only("mps.capable"), {{"mps.capable", "false"}}},
      {t + "empty config", mock({off}), DevicePluginConfig{}, only("mps.capable"), {{"mps.capable", "false"}}},
      {t + "config with timeslicing replicas", mock({off}), time_slicing({{"", "", 2}}), only("mps.capable"),
       {{"mps.capable", "false"}}},
      {t + "config with no mps replicas", mock({off}), mps({{"", "", 1}}), only("mps.capable"),
       {{"mps.capable", "false"}}},
      {t + "config with mps replicas no-mig-devices", mock({off}), mps({{"", "", 2}}), only("mps.capable"),
       {{"mps.capable", "true"}}},
      {t + "config with mps replicas mig-devices", mock({on}), mps({{"", "", 2}}), only("mps.capable"),
       {{"mps.capable", "false"}}},
  });
}

// ---- beyond GFD's unit tests: what its expected-output files name ----------

// mixed: the MIG-enabled parents under gpu.* (not shared: replicas 0), and
// each profile under mig-<profile>.*, with its attributes.
TEST(GfdLabels, MixedStrategy) {
  Machine m = mock({mig_enabled({mig_device(1, 1, 10), mig_device(1, 1, 10)}), mig_enabled({mig_device(7, 7, 80)})});
  NodeLabels l = gfd(m, strategy("mixed"));
  EXPECT_EQ(l.at("mig.strategy"), "mixed");
  EXPECT_EQ(l.at("gpu.count"), "2");
  EXPECT_EQ(l.at("gpu.replicas"), "0");
  EXPECT_EQ(l.at("gpu.product"), "MOCKMODEL");
  EXPECT_EQ(l.at("mig-1g.10gb.count"), "2");
  EXPECT_EQ(l.at("mig-1g.10gb.product"), "MOCKMODEL-MIG-1g.10gb");
  EXPECT_EQ(l.at("mig-1g.10gb.replicas"), "1");
  EXPECT_EQ(l.at("mig-1g.10gb.sharing-strategy"), "none");
  EXPECT_EQ(l.at("mig-1g.10gb.memory"), "10");
  EXPECT_EQ(l.at("mig-7g.80gb.count"), "1");
  EXPECT_EQ(l.at("mig-7g.80gb.slices.gi"), "7");
  EXPECT_FALSE(l.count("gpu.multiprocessors")) << "the profiles' attributes go under mig-<profile>.*";
}

// Without a config the strategy is the one the layout fits, and GFD writes
// no mig.strategy under none.
TEST(GfdLabels, TheStrategyFitsTheLayoutWithoutAConfig) {
  EXPECT_FALSE(gfd(mock({full_gpu()}), std::nullopt).count("mig.strategy"));
  EXPECT_EQ(gfd(mock({mig_enabled({mig_device(1, 1, 10)})}), std::nullopt).at("mig.strategy"), "single");
  EXPECT_EQ(gfd(mock({mig_enabled({mig_device(1, 1, 10)}), full_gpu()}), std::nullopt).at("mig.strategy"), "mixed");
  EXPECT_EQ(gfd(mock({mig_enabled()}), std::nullopt).at("mig.strategy"), "mixed") << "an empty GPU is no single";
  EXPECT_EQ(gfd(mock({mig_enabled({mig_device(1, 1, 10)})}), strategy("mixed")).at("mig.strategy"), "mixed");
}

// GFD's newVersionLabeler: both generations of names.
TEST(GfdLabels, Versions) {
  Machine m = mock({full_gpu()});
  m.nvidia.driver_version = "580.95.05";
  m.nvidia.cuda_driver_version = 13000;
  NodeLabels l = gfd(m, std::nullopt);
  NodeLabels want = {{"cuda.driver.major", "580"},          {"cuda.driver.minor", "95"},
                     {"cuda.driver.rev", "05"},             {"cuda.runtime.major", "13"},
                     {"cuda.runtime.minor", "0"},           {"cuda.driver-version.major", "580"},
                     {"cuda.driver-version.minor", "95"},   {"cuda.driver-version.revision", "05"},
                     {"cuda.driver-version.full", "580.95.05"}, {"cuda.runtime-version.major", "13"},
                     {"cuda.runtime-version.minor", "0"},   {"cuda.runtime-version.full", "13.0"}};
  for (const auto& [k, v] : want) EXPECT_EQ(l[k], v) << k;
  m.nvidia.driver_version = "400.300";  // the mocks' X.Y: an empty revision, as GFD writes it
  l = gfd(m, std::nullopt);
  EXPECT_EQ(l.at("cuda.driver.rev"), "");
  EXPECT_EQ(l.at("cuda.driver-version.full"), "400.300");
}

TEST(GfdLabels, FamilyAndModeAsGfdNamesThem) {
  EXPECT_EQ(gfd_family({7, 2}), "volta");
  EXPECT_EQ(gfd_family({7, 5}), "turing");
  EXPECT_EQ(gfd_family({8, 9}), "ada-lovelace");
  EXPECT_EQ(gfd_family({10, 0}), "blackwell");
  EXPECT_EQ(gfd_family({12, 0}), "blackwell");
  EXPECT_EQ(gfd_family({11, 0}), "undefined");
  Gpu g = full_gpu();
  EXPECT_EQ(gfd(mock({g}), std::nullopt).at("gpu.mode"), "graphics");
  g.pci_class = "0x030200";
  EXPECT_EQ(gfd(mock({g}), std::nullopt).at("gpu.mode"), "compute");
  g.pci_class.reset();
  EXPECT_EQ(gfd(mock({g}), std::nullopt).at("gpu.mode"), "unknown");
}

// Several models: GFD describes one per round, by Go's map order; gpuenv the
// first GPU's that is not in MIG mode, counting only that model's GPUs.
TEST(GfdLabels, MixedModelsDescribeOneModel) {
  Gpu a = full_gpu(), b = full_gpu();
  a.name = "NVIDIA GeForce RTX 3090", b.name = "NVIDIA GeForce RTX 4090";
  b.compute_capability = ComputeCapability{8, 9};
  NodeLabels l = gfd(mock({a, b, b}), std::nullopt);
  EXPECT_EQ(l.at("gpu.product"), "NVIDIA-GeForce-RTX-3090");
  EXPECT_EQ(l.at("gpu.count"), "1");
  EXPECT_EQ(l.at("gpu.family"), "ampere");
  l = gfd(mock({mig_enabled({mig_device(1, 1, 10)}), b}), strategy("none"));
  EXPECT_EQ(l.at("gpu.product"), "NVIDIA-GeForce-RTX-4090") << "a GPU not in MIG mode is described first";
  EXPECT_EQ(l.at("gpu.replicas"), "1");
}

// No GPU: GFD writes nothing of its own (NewDeviceLabeler is empty).
TEST(GfdLabels, NoGpuNoGfdLabels) {
  Machine m = mock({});
  EXPECT_TRUE(gfd(m, std::nullopt).empty());
}

}  // namespace
}  // namespace gpuenv

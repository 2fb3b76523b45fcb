// The device plugin's config as GFD's labels read it: the YAML its users
// write (examples of NVIDIA/k8s-device-plugin's README and Helm values), the
// same as JSON, and each malformed field named.
#include "decide/labels/device_plugin_config.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

DevicePluginConfig parse(const std::string& text) {
  DevicePluginConfig c;
  std::string err;
  EXPECT_TRUE(parse_device_plugin_config(text, &c, &err)) << err << "\n" << text;
  return c;
}

std::string error_of(const std::string& text) {
  DevicePluginConfig c;
  std::string err;
  EXPECT_FALSE(parse_device_plugin_config(text, &c, &err)) << text;
  return err;
}

TEST(DevicePluginConfig, TimeSlicingAsTheReadmeWritesIt) {
  DevicePluginConfig c = parse(R"(version: v1
flags:
  migStrategy: "none"
  failOnInitError: true
  plugin:
    passDeviceSpecs: false
    deviceListStrategy: [envvar]   # a flow list of a key gpuenv does not read
sharing:
  timeSlicing:
    renameByDefault: false
    failRequestsGreaterThanOne: false
    resources:
    - name: nvidia.com/gpu
      replicas: 10
)");
  EXPECT_EQ(c.mig_strategy, "none");
  EXPECT_EQ(c.time_slicing, (std::vector<ReplicatedResource>{{"nvidia.com/gpu", "", 10}}));
  EXPECT_FALSE(c.mps);
  EXPECT_EQ(sharing_strategy(c), "time-slicing");
  ASSERT_TRUE(replication_of(c, "nvidia.com/gpu"));
  EXPECT_EQ(replication_of(c, "nvidia.com/gpu")->replicas, 10);
  EXPECT_FALSE(replication_of(c, "nvidia.com/mig-1g.10gb"));
}

TEST(DevicePluginConfig, RenameByDefaultAndMigResources) {
  DevicePluginConfig c = parse(R"(
version: v1
flags:
  migStrategy: mixed
sharing:
  timeSlicing:
    renameByDefault: true
    resources:
      - name: nvidia.com/gpu
        replicas: 2
      - name: nvidia.com/mig-1g.5gb
        rename: nvidia.com/mig-1g.5gb.slice
        replicas: 4
        devices: [0, 1]
)");
  EXPECT_EQ(c.mig_strategy, "mixed");
  EXPECT_EQ(c.time_slicing, (std::vector<ReplicatedResource>{{"nvidia.com/gpu", "nvidia.com/gpu.shared", 2},
                                                             {"nvidia.com/mig-1g.5gb", "nvidia.com/mig-1g.5gb.slice", 4}}));
}

TEST(DevicePluginConfig, MpsIsTheSharingWhenPresent) {
  DevicePluginConfig c = parse("version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: '4'\n");
  ASSERT_TRUE(c.mps);
  EXPECT_EQ(sharing_strategy(c), "mps");
  EXPECT_EQ(replication_of(c, "nvidia.com/gpu")->replicas, 4);
  c = parse("version: v1\nsharing:\n  mps: {}\n");
  EXPECT_TRUE(c.mps) << "an empty mps: is MPS with nothing shared";
  EXPECT_EQ(sharing_strategy(c), "none");
}

TEST(DevicePluginConfig, TheHelmChartsDefaultAndAnEmptyFile) {
  DevicePluginConfig c = parse("version: v1\nflags:\n  migStrategy: single\nsharing:\n  timeSlicing: {}\n");
  EXPECT_EQ(c.mig_strategy, "single");
  EXPECT_TRUE(c.time_slicing.empty());
  EXPECT_EQ(sharing_strategy(c), "none");
  EXPECT_EQ(parse("# nothing but a comment\n"), DevicePluginConfig{}) << "an empty document: the defaults";
  EXPECT_EQ(parse("---\nversion: v1\n"), DevicePluginConfig{});
}

TEST(DevicePluginConfig, JsonToo) {
  DevicePluginConfig c = parse(R"({"version": "v1", "flags": {"migStrategy": "single"},
    "sharing": {"timeSlicing": {"renameByDefault": true, "resources": [{"name": "nvidia.com/gpu", "replicas": 3}]}}})");
  EXPECT_EQ(c.mig_strategy, "single");
  EXPECT_EQ(c.time_slicing, (std::vector<ReplicatedResource>{{"nvidia.com/gpu", "nvidia.com/gpu.shared", 3}}));
}

TEST(DevicePluginConfig, QuotedScalarsAndComments) {
  DevicePluginConfig c = parse(
      "version: \"v1\"  # quoted\n"
      "flags: {}\n"
      "sharing:\n"
      "  timeSlicing:\n"
      "    resources:\n"
      "    - name: 'nvidia.com/gpu'   # it's a comment\n"
      "      rename: \"nvidia.com/gpu#shared\"\n"
      "      replicas: 2\n");
  EXPECT_EQ(c.time_slicing, (std::vector<ReplicatedResource>{{"nvidia.com/gpu", "nvidia.com/gpu#shared", 2}}));
}

TEST(DevicePluginConfig, EachBadFieldIsNamed) {
  EXPECT_EQ(error_of("version: v2\n"), "version: v2 is not v1, the only version the device plugin knows");
  EXPECT_EQ(error_of("flags:\n  migStrategy: both\n"), "flags.migStrategy: both is not none, single or mixed");
  EXPECT_EQ(error_of("sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: x\n"),
            "sharing.timeSlicing.resources[0].replicas: expected a whole number of replicas, 1 or more");
  EXPECT_EQ(error_of("sharing:\n  timeSlicing:\n    resources:\n    - replicas: 2\n"),
            "sharing.timeSlicing.resources[0].name: missing");
  EXPECT_EQ(error_of("sharing:\n  mps:\n    resources: nvidia.com/gpu\n"), "sharing.mps.resources: expected a list");
  EXPECT_EQ(error_of("sharing:\n  timeSlicing:\n    renameByDefault: maybe\n"),
            "sharing.timeSlicing.renameByDefault: expected true or false");
  EXPECT_EQ(error_of("- a\n- b\n"), "the file: expected a mapping");
  EXPECT_EQ(error_of("version: v1\n\tflags: {}\n"), "line 2: a tab in the indentation");
  EXPECT_EQ(error_of("version: v1\n   flags: {}\n"), "line 2: indented deeper than the key before it");
  EXPECT_EQ(error_of("version: \"v1\n"), "line 1: text after a quoted string, or no closing quote");
  EXPECT_EQ(error_of("{\"version\": "), "not JSON (it starts with '{')");
}

TEST(DevicePluginConfig, DeepNestingIsRefusedNotRecursedInto) {
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += std::string(2 * i, ' ') + "k:\n";
  EXPECT_NE(error_of(deep).find("nested more than 32 deep"), std::string::npos);
  std::string dashes;
  for (int i = 0; i < 20000; ++i) dashes += "- ";
  EXPECT_NE(error_of(dashes + "x\n").find("nested more than"), std::string::npos);
}

}  // namespace
}  // namespace gpuenv

#include "model/kubelet/pod_devices.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

DeviceReading gpu(int index, const std::string& uuid, int minor) {
  DeviceReading d;
  d.gpu = index;
  d.uuid = uuid;
  d.minor_number = minor;
  return d;
}

DeviceReading mig(int index, int slot, const std::string& uuid, int gi) {
  DeviceReading d;
  d.gpu = index;
  d.mig = slot;
  d.uuid = uuid;
  d.gpu_instance_id = gi;
  return d;
}

const PodRef kTrain{"train-0", "ml", "trainer"};

TEST(PodDevices, KeysOfEachFormTheKubeletLists) {
  struct Row {
    const char* id;
    const char* key;
  } rows[] = {
      {"GPU-aaaa", "GPU-aaaa"},
      {"GPU-aaaa::3", "GPU-aaaa"},                 // time-sliced replica
      {"GPU-aaaa/vgpu1", "GPU-aaaa"},              // GKE shared GPU
      {"MIG-1234", "MIG-1234"},                    // R470 and later
      {"MIG-GPU-aaaa/3/0", "GPU-aaaa/3"},          // before R470: GPU, GI, CI
      {"MIG-GPU-aaaa/3", "MIG-GPU-aaaa/3"},        // not that form: kept whole
      {"nvidia1/gi4", "nvidia1/gi4"},              // GKE MIG
      {"nvidia2", "nvidia2"},
  };
  for (const Row& r : rows) EXPECT_EQ(pod_device_key(r.id), r.key) << r.id;
}

TEST(PodDevices, FindsAGpuByUuidOrDeviceNameAndNoOther) {
  DeviceReading g0 = gpu(0, "GPU-aaaa", 0), g1 = gpu(1, "GPU-bbbb", 1), g2 = gpu(2, "GPU-cccc", 2);
  PodDevices pods;
  pods.add("nvidia.com/gpu", "GPU-aaaa", kTrain);
  pods.add("nvidia.com/gpu", "nvidia2", {"infer-1", "serve", "server"});
  pods.add("example.com/fpga", "GPU-bbbb", kTrain);  // not NVIDIA's resource
  pods.add("nvidia.com/gpu", "", kTrain);
  EXPECT_EQ(pods.size(), 2u);
  ASSERT_NE(pods.find(g0, nullptr), nullptr);
  EXPECT_EQ(*pods.find(g0, nullptr), kTrain);
  EXPECT_EQ(pods.find(g1, nullptr), nullptr);
  ASSERT_NE(pods.find(g2, nullptr), nullptr);
  EXPECT_EQ(pods.find(g2, nullptr)->pod, "infer-1");
}

TEST(PodDevices, FindsAMigDeviceByItsUuidItsInstanceOrGkeName) {
  DeviceReading g = gpu(0, "GPU-aaaa", 3);
  DeviceReading m3 = mig(0, 0, "MIG-1111", 3), m4 = mig(0, 1, "MIG-2222", 4), m5 = mig(0, 2, "MIG-3333", 5);
  PodDevices pods;
  pods.add("nvidia.com/mig-2g.20gb", "MIG-2222", kTrain);
  pods.add("nvidia.com/mig-2g.20gb", "MIG-GPU-aaaa/5/0", {"old", "ns", "c"});
  pods.add("nvidia.com/mig-2g.20gb", "nvidia3/gi3", {"gke", "ns", "c"});
  ASSERT_NE(pods.find(m4, &g), nullptr);
  EXPECT_EQ(*pods.find(m4, &g), kTrain);
  ASSERT_NE(pods.find(m5, &g), nullptr);
  EXPECT_EQ(pods.find(m5, &g)->pod, "old");
  ASSERT_NE(pods.find(m3, &g), nullptr);
  EXPECT_EQ(pods.find(m3, &g)->pod, "gke");
  EXPECT_EQ(pods.find(g, nullptr), nullptr);  // the GPU itself is no one's
}

TEST(PodDevices, AMigDeviceIsNotItsGpu) {
  DeviceReading g = gpu(0, "GPU-aaaa", 0);
  DeviceReading m = mig(0, 0, "MIG-1111", 3);
  PodDevices pods;
  pods.add("nvidia.com/gpu", "GPU-aaaa", kTrain);
  pods.add("nvidia.com/gpu", "nvidia0", kTrain);
  EXPECT_EQ(pods.find(m, &g), nullptr);
}

// Kubernetes allows 253 bytes for a pod's name and 63 for a namespace's or
// container's: a longer one (a hostile kubelet's 3 MB name) is no label.
TEST(PodDevices, NamesLongerThanKubernetesAllowsAreRefusedAndCounted) {
  DeviceReading g0 = gpu(0, "GPU-aaaa", 0), g1 = gpu(1, "GPU-bbbb", 1), g2 = gpu(2, "GPU-cccc", 2),
                g3 = gpu(3, "GPU-dddd", 3), g4 = gpu(4, "GPU-eeee", 4);
  PodDevices pods;
  PodRef longest{std::string(253, 'p'), std::string(63, 'n'), std::string(63, 'c')};
  pods.add("nvidia.com/gpu", "GPU-aaaa", longest);
  pods.add("nvidia.com/gpu", "GPU-bbbb", {std::string(3 << 20, 'p'), "ml", "trainer"});
  pods.add("nvidia.com/gpu", "GPU-cccc", {"train-0", std::string(64, 'n'), "trainer"});
  pods.add("nvidia.com/gpu", "GPU-dddd", {"train-0", "ml", std::string(64, 'c')});
  pods.add("example.com/fpga", "GPU-eeee", {std::string(300, 'p'), "ml", "c"});  // not ours: not counted
  ASSERT_NE(pods.find(g0, nullptr), nullptr);
  EXPECT_EQ(*pods.find(g0, nullptr), longest);
  EXPECT_EQ(pods.find(g1, nullptr), nullptr);
  EXPECT_EQ(pods.find(g2, nullptr), nullptr);
  EXPECT_EQ(pods.find(g3, nullptr), nullptr);
  EXPECT_EQ(pods.find(g4, nullptr), nullptr);
  EXPECT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods.refused(), 3u);
  EXPECT_EQ(pods.first_refusal(), "a pod name of 3145728 bytes, over the 253 Kubernetes allows");
}

TEST(PodDevices, TheProblemNamesTheFieldAndItsSizeNotTheName) {
  EXPECT_EQ(pod_ref_problem(kTrain), "");
  EXPECT_EQ(pod_ref_problem({std::string(254, 'x'), "ml", "c"}), "a pod name of 254 bytes, over the 253 Kubernetes allows");
  EXPECT_EQ(pod_ref_problem({"p", std::string(64, 'x'), "c"}), "a namespace of 64 bytes, over the 63 Kubernetes allows");
  EXPECT_EQ(pod_ref_problem({"p", "ml", std::string(100, 'x')}),
            "a container name of 100 bytes, over the 63 Kubernetes allows");
}

}  // namespace
}  // namespace gpuenv

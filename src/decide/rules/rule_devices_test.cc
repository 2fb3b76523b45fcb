#include <gtest/gtest.h>

#include "builders.h"
#include "decide/rules/rules.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace testing;
const std::map<std::string, std::string> kPci = {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};

TEST(Devices, Table) {
  std::vector<RuleCase> rows = {
      {"no GPU: nothing to order", machine::none(), {}, {}},
      {"one GPU still gets PCI order, so indices match nvidia-smi", machine::h100(), {}, kPci},
      {"GPUs sensed through CUDA alone", machine::jetson_orin(), {}, kPci},
      {"a mixed box names its models",
       machine::rtx3090_4090(),
       {},
       kPci,
       {},
       {},
       {{"CUDA_DEVICE_ORDER", "mixes NVIDIA GeForce RTX 3090, NVIDIA GeForce RTX 4090"}}},
      {"eight of one model: no talk of mixing",
       machine::a100_nvlink_8(),
       {},
       kPci,
       {},
       {},
       {{"CUDA_DEVICE_ORDER", "CUDA's default FASTEST_FIRST may number GPUs differently"}}},
      {"a valid CUDA_VISIBLE_DEVICES: no note", machine::h100(2), {{"CUDA_VISIBLE_DEVICES", "1"}}, kPci},
      {"empty CUDA_VISIBLE_DEVICES hides every GPU",
       machine::h100(2),
       {{"CUDA_VISIBLE_DEVICES", ""}},
       kPci,
       {{Severity::kWarning, "CUDA_VISIBLE_DEVICES= hides every GPU, so CUDA will see none; fix: unset it"}}},
      {"-1 hides every GPU",
       machine::h100(2),
       {{"CUDA_VISIBLE_DEVICES", "-1"}},
       kPci,
       {{Severity::kWarning, "CUDA_VISIBLE_DEVICES=-1 hides every GPU"}}},
      {"an index past the last GPU",
       machine::h100(2),
       {{"CUDA_VISIBLE_DEVICES", "0,7"}},
       kPci,
       {{Severity::kWarning,
         "CUDA_VISIBLE_DEVICES=0,7: device index 7 does not exist (2 device(s) present); CUDA ignores "
         "this entry and every one after it; fix: list device indices or GPU-/MIG- UUIDs"}}},
      {"garbage hides everything, and says so",
       machine::h100(2),
       {{"CUDA_VISIBLE_DEVICES", "abc"}},
       kPci,
       {{Severity::kWarning, "every one after it, so CUDA will see no GPU; fix:"}}},
      {"an unknown UUID",
       machine::h100(2),
       {{"CUDA_VISIBLE_DEVICES", "GPU-ffff"}},
       kPci,
       {{Severity::kWarning, "no device has the UUID GPU-ffff"}}},
  };
  run_table(rule_devices, rows);
}

Machine lost_gpu(int n, int lost) {
  Machine m = machine::h100(n);
  m.gpus[lost].problem = Problem{"nvml", "nvml_gpu_lost", "nvmlDeviceGetUUID failed: the GPU has fallen off the bus",
                                 "reboot"};
  return m;
}

// A lost GPU is left out of CUDA_VISIBLE_DEVICES (the others by UUID), and
// NVML failing although installed is warned about; no NVML at all is not.
TEST(Devices, LostGpusAndFailingDrivers) {
  Machine three = lost_gpu(3, 1);
  Machine mismatch = machine::none();
  mismatch.nvidia.problems = {{"nvml", "nvml_version_mismatch", "nvmlInit_v2 failed: driver/library version mismatch",
                               "reboot"}};
  std::vector<RuleCase> rows = {
      {"GPU 1 of 3 lost: the other two, by UUID",
       three,
       {},
       {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", *three.gpus[0].uuid + "," + *three.gpus[2].uuid}},
       {{Severity::kWarning, "GPU 1: nvmlDeviceGetUUID failed: the GPU has fallen off the bus; fix: reboot"}},
       {},
       {{"CUDA_VISIBLE_DEVICES", "GPU 1 failed as NVML sensed it"}}},
      {"the only GPU lost: nothing left to name, still warned",
       lost_gpu(1, 0),
       {},
       kPci,
       {{Severity::kWarning, "GPU 0: nvmlDeviceGetUUID failed"}}},
      {"driver/library mismatch: warned with the fix", mismatch, {}, {},
       {{Severity::kWarning, "version mismatch; fix: reboot"}}},
      {"no NVIDIA libraries: a CPU machine, silent", machine::none(), {}, {}},
  };
  run_table(rule_devices, rows);
}

}  // namespace
}  // namespace gpuenv

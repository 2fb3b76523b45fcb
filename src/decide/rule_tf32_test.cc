#include <gtest/gtest.h>

#include "decide/rule_test_support.h"
#include "decide/rules.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;

struct Row {
  std::string description;
  Machine machine;
  Env env;
  Env expected;
  std::vector<std::string> notes;
};

const Env kOn = {{"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1"}, {"GPUENV_TF32", "1"}};
const Env kOff = {{"GPUENV_TF32", "0"}};

MachineBuilder ada_and_pascal() {
  return MachineBuilder().gpus(models::rtx4090()).gpus(models::gtx1080());
}

std::vector<Row> rows() {
  // clang-format off
  return {
      {"GTX 1080: Pascal", machine::gtx1080(), {}, kOff, {}},
      {"V100: Volta", machine::v100(), {}, kOff, {}},
      {"T4: Turing", machine::t4(), {}, kOff, {}},
      {"A10", machine::a10(), {}, kOn, {}},
      {"8x A100 NVLink", machine::a100_nvlink_8(), {}, kOn, {}},
      {"A100 MIG", machine::a100_mig(), {}, kOn, {}},
      {"RTX 3090 + 4090", machine::rtx3090_4090(), {}, kOn, {}},
      {"L4", machine::l4(), {}, kOn, {}},
      {"H100", machine::h100(), {}, kOn, {}},
      {"H200", machine::h200(), {}, kOn, {}},
      {"B200", machine::b200(), {}, kOn, {}},
      {"RTX 5090", machine::rtx5090(), {}, kOn, {}},
      {"Jetson Orin", machine::jetson_orin(), {}, kOn, {}},
      {"no GPU", machine::none(), {}, {}, {}},
      {"mixed box with a Pascal GPU", ada_and_pascal(), {}, kOff, {}},
      {"CUDA_VISIBLE_DEVICES hides the Pascal GPU", ada_and_pascal(),
       {{"CUDA_VISIBLE_DEVICES", "0"}}, kOn, {}},
      {"CUDA_VISIBLE_DEVICES keeps only the Pascal GPU", ada_and_pascal(),
       {{"CUDA_VISIBLE_DEVICES", "1"}}, kOff, {}},
      {"CUDA_VISIBLE_DEVICES hides every GPU", machine::h100(), {{"CUDA_VISIBLE_DEVICES", ""}}, {},
       {}},
      {"capability not sensed", without_cc(machine::h100()), {}, {},
       {"TF32 left alone: the compute capability of NVIDIA H100 80GB HBM3 (cc unknown)"}},
      {"a future GPU beyond the table", one_gpu("next", {13, 0}), {}, kOn, {}},
  };
  // clang-format on
}

TEST(Tf32, Table) {
  for (const Row& r : rows()) {
    SCOPED_TRACE(r.description);
    Decision d = rule_tf32(r.machine, options_for(r.machine, r.env));
    EXPECT_EQ(settings_of(d), r.expected);
    expect_notes(d, r.notes);
  }
}

TEST(Tf32, ReasonGivesTheMeasurementAndPrecision) {
  Machine m = machine::h200();
  Decision d = rule_tf32(m, options_for(m));
  const Setting* s = find_setting(d, "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE");
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->reason.find("NVIDIA H200 (Hopper, 9.0)"), std::string::npos) << s->reason;
  EXPECT_NE(s->reason.find("10-bit mantissa"), std::string::npos) << s->reason;
  EXPECT_NE(s->reason.find("54.9k -> 161k tokens/s"), std::string::npos) << s->reason;
}

TEST(Tf32, MixedBoxNamesTheGpuThatLacksTf32) {
  Machine m = ada_and_pascal();
  Decision d = rule_tf32(m, options_for(m));
  const Setting* s = find_setting(d, "GPUENV_TF32");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->reason,
            "for scripts: no TF32 tensor cores (Ampere, cc 8.0+) on NVIDIA GeForce GTX 1080 "
            "(Pascal, 6.1), so TORCH_ALLOW_TF32_CUBLAS_OVERRIDE stays unset");
}

}  // namespace
}  // namespace gpuenv

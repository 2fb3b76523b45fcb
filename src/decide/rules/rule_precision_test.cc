#include <gtest/gtest.h>

#include "decide/rules/rules.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;

Env expect(const std::string& dtype, const std::string& fp8, const std::string& fp4) {
  return {{"GPUENV_AUTOCAST_DTYPE", dtype}, {"GPUENV_FP8", fp8}, {"GPUENV_FP4", fp4}};
}

MachineBuilder volta_and_pascal() {
  return MachineBuilder().gpus(models::v100()).gpus(models::gtx1080());
}

std::vector<RuleCase> precision_rows() {
  constexpr Severity kWarn = Severity::kWarning;
  // clang-format off
  return {
      {"GTX 1080: no tensor cores", machine::gtx1080(), {}, expect("float32", "0", "0")},
      {"V100: fp16 only", machine::v100(), {}, expect("float16", "0", "0")},
      {"T4: fp16 only", machine::t4(), {}, expect("float16", "0", "0")},
      {"A10", machine::a10(), {}, expect("bfloat16", "0", "0")},
      {"8x A100 NVLink", machine::a100_nvlink_8(), {}, expect("bfloat16", "0", "0")},
      {"A100 MIG", machine::a100_mig(), {}, expect("bfloat16", "0", "0")},
      {"RTX 3090 + 4090: the 3090 lacks FP8", machine::rtx3090_4090(), {},
       expect("bfloat16", "0", "0")},
      {"CUDA_VISIBLE_DEVICES=1: only the 4090", machine::rtx3090_4090(),
       {{"CUDA_VISIBLE_DEVICES", "1"}}, expect("bfloat16", "1", "0")},
      {"L4: Ada has FP8", machine::l4(), {}, expect("bfloat16", "1", "0")},
      {"H100", machine::h100(), {}, expect("bfloat16", "1", "0")},
      {"H200", machine::h200(), {}, expect("bfloat16", "1", "0")},
      {"B200: FP4", machine::b200(), {}, expect("bfloat16", "1", "1")},
      {"RTX 5090: FP4", machine::rtx5090(), {}, expect("bfloat16", "1", "1")},
      {"Jetson Orin", machine::jetson_orin(), {}, expect("bfloat16", "0", "0")},
      {"Thor", one_gpu("Thor", {11, 0}), {}, expect("bfloat16", "1", "1")},
      {"B300", one_gpu("NVIDIA B300", {10, 3}), {}, expect("bfloat16", "1", "1")},
      {"GB10", one_gpu("NVIDIA GB10", {12, 1}), {}, expect("bfloat16", "1", "1")},
      {"no GPU", machine::none(), {}, {}},
      {"the lowest GPU decides: Volta + Pascal", volta_and_pascal(), {},
       expect("float32", "0", "0")},
      {"CUDA_VISIBLE_DEVICES=0: only the Volta", volta_and_pascal(),
       {{"CUDA_VISIBLE_DEVICES", "0"}}, expect("float16", "0", "0")},
      {"Kepler, older than the table: no tensor cores", one_gpu("Tesla K80", {3, 7}), {},
       expect("float32", "0", "0")},
      {"capability not sensed", without_cc(machine::b200()), {}, {},
       {{kWarn, "precision left alone: the compute capability of NVIDIA B200 (cc unknown)"}}},
      {"a GPU beyond the table: nothing guessed", one_gpu("next", {13, 0}), {}, {},
       {{kWarn, "precision left alone: gpuenv does not know the tensor cores of next (cc 13.0)"}}},
  };
  // clang-format on
}

TEST(Precision, Table) { run_table(rule_precision, precision_rows()); }

std::string reason(const Machine& m, const std::string& name) {
  Decision d = rule_precision(m, options_for(m));
  const Setting* s = find_setting(d, name);
  return s ? s->reason : "(not set)";
}

TEST(Precision, Float16SaysGradScaler) {
  EXPECT_NE(reason(machine::v100(), "GPUENV_AUTOCAST_DTYPE").find("GradScaler"), std::string::npos);
}

TEST(Precision, ReasonsNameTheGpusThatLackAFormat) {
  EXPECT_EQ(reason(machine::rtx3090_4090(), "GPUENV_FP8"),
            "for scripts: no FP8 (Ada/Hopper, cc 8.9+) tensor cores on NVIDIA GeForce RTX 3090 "
            "(Ampere, 8.6)");
  EXPECT_EQ(reason(machine::b200(), "GPUENV_FP4"),
            "for scripts: FP4 (Blackwell, cc 10.0+) tensor cores on NVIDIA B200 (Blackwell, 10.0)");
  EXPECT_NE(reason(machine::gtx1080(), "GPUENV_AUTOCAST_DTYPE").find("no tensor cores"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuenv

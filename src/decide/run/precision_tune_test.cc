#include "decide/run/precision_tune.h"

#include <gtest/gtest.h>

#include "decide/verdict.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;

TEST(PrecisionTune, Bf16IsDecidedOnTheJobsGpus) {
  struct Row {
    const char* what;
    Machine m;
    Env env;
    const char* refusal;  // "" when +precision applies, else a part of why not
  } rows[] = {
      {"H200", machine::h200(), {}, ""},
      {"8x A100 NVLink", machine::a100_nvlink_8(), {}, ""},
      {"A100 MIG", machine::a100_mig(), {}, ""},
      {"A10", machine::a10(), {}, ""},
      {"B200", machine::b200(), {}, ""},
      {"Jetson Orin", machine::jetson_orin(), {}, ""},
      {"V100: fp16 only", machine::v100(), {}, "has no bf16 tensor cores"},
      {"T4: fp16 only, loss scaling named", machine::t4(), {}, "loss scaling"},
      {"GTX 1080", machine::gtx1080(), {}, "has no bf16"},
      {"no GPU", machine::none(), {}, "no GPU is visible"},
      {"the job sees none", machine::h200(), {{"CUDA_VISIBLE_DEVICES", ""}}, "no GPU is visible"},
      {"3090 + 4090", machine::rtx3090_4090(), {}, ""},
      {"V100 + 3090: one lacks it", MachineBuilder().gpus(models::v100()).gpus(models::rtx3090()), {}, "V100"},
      {"V100 + 3090, the job sees the 3090", MachineBuilder().gpus(models::v100()).gpus(models::rtx3090()),
       {{"CUDA_VISIBLE_DEVICES", "1"}}, ""},
  };
  for (const auto& r : rows) {
    std::string why = bf16_autocast_refusal(r.m, options_for(r.m, r.env));
    if (std::string(r.refusal).empty())
      EXPECT_EQ(why, "") << r.what;
    else
      EXPECT_NE(why.find(r.refusal), std::string::npos) << r.what << ": " << why;
  }
}

TEST(PrecisionTune, AnUnknownComputeCapabilityIsRefused) {
  Machine m = machine::h200();
  m.gpus[0].compute_capability.reset();
  EXPECT_NE(bf16_autocast_refusal(m, options_for(m)).find("could not be sensed"), std::string::npos);
}

Measurement gemm(const std::string& key, const std::string& uuid, double tflops, const std::string& at,
                 const std::string& status = "ok") {
  Measurement x;
  x.key = key, x.gpu_uuid = uuid, x.value = tflops, x.unit = "TFLOP/s", x.status = status, x.measured_at = at;
  return x;
}

TEST(PrecisionTune, TheGainIsThisMachinesMeasurement) {
  Machine m = machine::h100(2);
  std::string a = *m.gpus[0].uuid, b = *m.gpus[1].uuid;
  EXPECT_FALSE(measured_bf16_gain(m, {a}, true)) << "nothing measured: no number";
  m.measurements = {gemm("gemm_bf16_4096", a, 600, "2026-12-01T10:00:00Z"),
                    gemm("gemm_tf32_4096", a, 300, "2026-12-01T10:00:00Z"),
                    gemm("gemm_bf16_8192", a, 760, "2026-12-02T10:00:00Z"),
                    gemm("gemm_tf32_8192", a, 380, "2026-12-02T09:00:00Z"),
                    gemm("gemm_fp32_8192", a, 50, "2026-12-02T09:00:00Z"),
                    gemm("gemm_bf16_16384", a, 800, "2026-12-02T10:00:00Z"),
                    gemm("gemm_tf32_16384", a, 0, "2026-12-02T10:00:00Z", "failed")};
  auto g = measured_bf16_gain(m, {a}, true);
  ASSERT_TRUE(g);
  EXPECT_DOUBLE_EQ(g->factor, 2.0);  // the largest size with both measured ok
  EXPECT_EQ(g->basis, "gemm_bf16_8192 over gemm_tf32_8192 (2.0x), measured 2026-12-02");
  EXPECT_DOUBLE_EQ(measured_bf16_gain(m, {a}, false)->factor, 760.0 / 50);  // TF32 off: plain fp32
  EXPECT_FALSE(measured_bf16_gain(m, {a, b}, true)) << "GPU b has no pair";
  m.measurements.push_back(gemm("gemm_bf16_8192", b, 700, "2026-12-02T10:00:00Z"));
  m.measurements.push_back(gemm("gemm_tf32_8192", b, 400, "2026-12-02T10:00:00Z"));
  EXPECT_DOUBLE_EQ(measured_bf16_gain(m, {a, b}, true)->factor, 1.75);  // the smaller
  EXPECT_FALSE(measured_bf16_gain(m, {}, true));
}

// Item 4 of issue 25: a busy job on a bf16 GPU is told what +precision would
// give, from this machine's measurement, and never gets it applied.
TEST(PrecisionTune, ABusyJobIsToldNeverTuned) {
  Timeline t;
  for (int i = 0; i < 30; ++i) {
    JobSample s;
    s.t = i, s.v[kUtilPct] = 99, s.v[kMemMib] = 100000;
    t.add(s);
  }
  JobContext c;
  c.gpus.push_back({"GPU-x", "NVIDIA H200", 143771.0, 5, 16, 1980.0, 700.0});
  auto busy_fix = [&] {
    std::vector<Verdict> vs = judge(c, t);
    EXPECT_EQ(vs[0].name, "busy");
    EXPECT_TRUE(vs[0].tune.empty());  // suggested, never applied by --tune
    return vs[0].fix;
  };
  EXPECT_EQ(busy_fix().find("precision"), std::string::npos) << "no bf16 on the job's GPUs: no word";
  c.bf16 = true;
  EXPECT_NE(busy_fix().find("may be faster here (no bf16 and TF32 GEMMs measured on this GPU"), std::string::npos)
      << busy_fix();
  c.bf16_gain = 2.07;
  c.bf16_gain_basis = "gemm_bf16_8192 over gemm_tf32_8192 (2.1x), measured 2026-12-02";
  std::string fix = busy_fix();
  EXPECT_NE(fix.find("bf16 autocast would give up to about 2.1x here (measured on this GPU: gemm_bf16_8192"),
            std::string::npos) << fix;
  EXPECT_NE(fix.find("`gpuenv run --tune=+precision` applies it"), std::string::npos) << fix;
  EXPECT_DOUBLE_EQ(judge(c, t)[0].figures.at("bf16_gain"), 2.07);
  c.precision = "bf16";
  EXPECT_EQ(busy_fix().find("precision"), std::string::npos) << "it ran with it already";
}

}  // namespace
}  // namespace gpuenv

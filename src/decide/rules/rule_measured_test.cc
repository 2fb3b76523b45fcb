#include <gtest/gtest.h>

#include "builders.h"
#include "decide/decide.h"
#include "decide/rules/rule_measured.h"
#include "decide/rules/rules.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace testing;

std::string uuid(const Machine& m, int i) { return *m.gpus.at(i).uuid; }

Measurement figure(const std::string& key, const std::string& gpu, std::optional<double> value, const std::string& unit,
                   std::optional<double> peak = std::nullopt, std::optional<std::string> peer = std::nullopt) {
  Measurement x;
  x.key = key, x.gpu_uuid = gpu, x.peer_uuid = peer, x.value = value, x.unit = unit, x.peak = peak;
  x.detail = "method", x.measured_at = "2025-03-04T05:06:07Z";
  return x;
}

Measurement failed(Measurement x, const std::string& detail) {
  x.status = "failed", x.value.reset(), x.detail = detail;
  return x;
}

/// m with the figures added.
Machine with(Machine m, std::vector<Measurement> (*figures)(const Machine&)) {
  m.measurements = figures(m);
  return m;
}

std::vector<Measurement> healthy(const Machine& m) {
  std::vector<Measurement> out;
  for (int i = 0; i < static_cast<int>(m.gpus.size()); ++i) {
    out.push_back(figure("gemm_bf16_8192", uuid(m, i), 780, "TFLOP/s", 989.4));
    out.push_back(figure("memcpy_d2d", uuid(m, i), 4300, "GB/s", 4800));
    out.push_back(figure("h2d_pinned", uuid(m, i), 55, "GB/s", 63));
  }
  return out;
}

std::vector<Measurement> slow_p2p(const Machine& m) {
  auto out = healthy(m);
  out.push_back(figure("p2p", uuid(m, 0), 3.1, "GB/s", std::nullopt, uuid(m, 1)));
  out.push_back(figure("p2p_via_host", uuid(m, 0), 24.5, "GB/s", std::nullopt, uuid(m, 1)));
  out.push_back(figure("p2p", uuid(m, 1), 40, "GB/s", std::nullopt, uuid(m, 0)));
  out.push_back(figure("p2p_via_host", uuid(m, 1), 24.5, "GB/s", std::nullopt, uuid(m, 0)));
  return out;
}

std::vector<Measurement> fast_p2p(const Machine& m) {
  auto out = healthy(m);
  out.push_back(figure("p2p", uuid(m, 0), 390, "GB/s", std::nullopt, uuid(m, 1)));
  out.push_back(figure("p2p_via_host", uuid(m, 0), 24.5, "GB/s", std::nullopt, uuid(m, 1)));
  return out;
}

std::vector<Measurement> broken_p2p(const Machine& m) {
  auto out = healthy(m);
  out.push_back(failed(figure("p2p", uuid(m, 1), 0, "GB/s", std::nullopt, uuid(m, 2)),
                       "wrong result: the peer copy delivered 12 wrong words"));
  return out;
}

std::vector<Measurement> slow_gpu1(const Machine& m) {
  auto out = healthy(m);
  out.push_back(figure("gemm_bf16_4096", uuid(m, 1), 900, "TFLOP/s", 989.4));  // a smaller size: not the headline
  for (auto& x : out)
    if (x.gpu_uuid == uuid(m, 1) && x.key == "gemm_bf16_8192") x.value = 412;
  return out;
}

// A healthy H200 at its power cap: 69 % of the datasheet bf16 rate.
std::vector<Measurement> power_capped(const Machine& m) {
  auto out = healthy(m);
  for (auto& x : out) {
    if (x.key == "gemm_bf16_8192") x.value = 685;
    if (x.key == "memcpy_d2d") x.value = 3400;  // 71 %
  }
  return out;
}

std::vector<Measurement> slow_memory_and_link(const Machine& m) {
  auto out = healthy(m);
  for (auto& x : out) {
    if (x.key == "memcpy_d2d") x.value = 2000;
    if (x.key == "h2d_pinned") x.value = 14;
  }
  out.push_back(figure("copy_kernel", uuid(m, 0), 2100, "GB/s", 4800));  // the better of the two counts
  return out;
}

std::vector<Measurement> wrong_gemm(const Machine& m) {
  auto out = healthy(m);
  out.push_back(failed(figure("gemm_fp16_8192", uuid(m, 0), 0, "TFLOP/s", 989.4),
                       "wrong result: relative error 0.8 over 256 sampled entries"));
  return out;
}

std::vector<Measurement> odd_keys(const Machine& m) {
  return {figure("gemm_bf16_", uuid(m, 0), 10, "TFLOP/s", 989.4),
          figure("gemm_bf16_x", uuid(m, 0), 900, "TFLOP/s", 989.4),
          figure("p2p", uuid(m, 0), 1, "GB/s", std::nullopt, "GPU-unknown"), figure("", "", std::nullopt, "")};
}

std::vector<Measurement> unknown_peak(const Machine& m) {
  return {figure("gemm_bf16_8192", uuid(m, 0), 10, "TFLOP/s"), figure("memcpy_d2d", uuid(m, 0), 10, "GB/s")};
}

Machine x8_width(Machine m) {
  m.gpus[0].pcie.width_current = 8;
  return m;
}

std::vector<RuleCase> p2p_rows() {
  Machine h100x2 = machine::h100(2).with_nvlink(), h100x3 = machine::h100(3).with_nvlink();
  // What the nccl rule sets on these hosts anyway (no InfiniBand).
  const std::map<std::string, std::string> nccl = {{"NCCL_IB_DISABLE", "1"}, {"NCCL_DEBUG", "WARN"}};
  std::map<std::string, std::string> off = nccl;
  off["NCCL_P2P_DISABLE"] = "1";
  return {
      {"never measured: nothing", h100x2, {}, nccl},
      {"healthy figures: nothing", with(h100x2, healthy), {}, nccl},
      {"P2P faster than the host path: nothing", with(h100x2, fast_p2p), {}, nccl},
      {"P2P slower than through host memory",
       with(h100x2, slow_p2p),
       {},
       off,
       {},
       {},
       {{"NCCL_P2P_DISABLE",
         "measured by gpuenv bench: GPU 0->1 3.1 GB/s peer to peer against 24.5 GB/s through host memory "
         "(2025-03-04); NCCL goes through host memory instead"}}},
      {"P2P measured broken",
       with(h100x3, broken_p2p),
       {},
       off,
       {},
       {},
       {{"NCCL_P2P_DISABLE", "GPU 1->2 peer copy failed (wrong result: the peer copy delivered 12 wrong words"}}},
      {"the broken pair is not visible", with(h100x3, broken_p2p), {{"CUDA_VISIBLE_DEVICES", "0,1"}}, nccl},
      {"the slow pair is half visible: one GPU, NCCL not in play", with(h100x2, slow_p2p),
       {{"CUDA_VISIBLE_DEVICES", "0"}}, {}, {{Severity::kInfo, "no NCCL settings: one GPU"}}},
  };
}

std::vector<RuleCase> peak_rows() {
  Machine h200x2 = machine::h200(2).with_nvlink(), h200 = machine::h200();
  return {
      {"one GPU far below its GEMM peak",
       with(h200x2, slow_gpu1),
       {},
       {},
       {{Severity::kWarning,
         "GPU 1 (NVIDIA H200): GEMM throughput measured 412.0 TFLOP/s, 42 % of its 989.4 TFLOP/s peak "
         "(gpuenv bench gemm_bf16_8192, 2025-03-04); likely causes: SM clocks held low or throttled (max 1980 MHz), "
         "a power cap (limit 700 W), temperature"}}},
      {"its GPU is not visible", with(h200x2, slow_gpu1), {{"CUDA_VISIBLE_DEVICES", "0"}}, {}},
      {"69 % of the GEMM peak and 71 % of memory's: healthy", with(h200, power_capped), {}, {}},
      {"memory and the host link far below",
       with(h200, slow_memory_and_link),
       {},
       {},
       {{Severity::kWarning,
         "device memory bandwidth measured 2100.0 GB/s, 44 % of its 4800.0 GB/s peak "
         "(gpuenv bench copy_kernel"},
        {Severity::kWarning, "host to device bandwidth measured 14.0 GB/s, 22 % of its 63.0 GB/s peak"}}},
      {"a link at half width is named",
       with(x8_width(h200), slow_memory_and_link),
       {},
       {},
       {{Severity::kWarning, "memory clock held low (max 3201 MHz)"},
        {Severity::kWarning, "likely causes: the PCIe link runs at x8 of x16 (reseat the card or check the slot)"}}},
      {"a wrong result is reported",
       with(h200, wrong_gemm),
       {},
       {},
       {{Severity::kWarning,
         "GPU 0: gemm_fp16_8192 failed when last measured (wrong result: relative error 0.8 "
         "over 256 sampled entries, 2025-03-04); run `gpuenv check --long`"}}},
      {"no peak known: no verdict", with(h200, unknown_peak), {}, {}},
      {"keys from an odd snapshot do not throw",
       with(h200, odd_keys),
       {},
       {},
       {{Severity::kWarning, "GEMM throughput measured 10.0 TFLOP/s"}}},
  };
}

// The nccl rule owns NCCL_P2P_DISABLE and decides it from these figures too;
// the measured rule sets nothing.
TEST(MeasuredRule, P2pFromMeasurements) {
  run_table(rule_nccl, p2p_rows());
  for (const RuleCase& row : p2p_rows()) EXPECT_TRUE(rule_measured(row.machine, options_with(row.env)).settings.empty());
}
TEST(MeasuredRule, FarBelowPeak) { run_table(rule_measured, peak_rows()); }

// The driver's P2P status and the measurement, both in the one reason.
TEST(MeasuredRule, NcclCitesTheDriverAndTheMeasurement) {
  Machine m = with(machine::h100(2).with_pcie_p2p("chipset_not_supported"), slow_p2p);
  Plan plan = decide(m, options_with({}));
  const Setting* s = plan.find("NCCL_P2P_DISABLE");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->rule, "nccl");
  EXPECT_EQ(s->reason,
            "the driver reports no P2P reads between GPU 0-1 (chipset_not_supported); measured by "
            "gpuenv bench: GPU 0->1 3.1 GB/s peer to peer against 24.5 GB/s through host memory "
            "(2025-03-04); NCCL goes through host memory instead (if P2P should work, check PCIe "
            "ACS and the IOMMU: `nvidia-smi topo -p2p r`)");
  Plan unmeasured = decide(machine::h100(2).with_nvlink(), options_with({}));
  EXPECT_EQ(unmeasured.find("NCCL_P2P_DISABLE"), nullptr);
}

// The job record's GEMM figures: the largest size of each precision, on
// this GPU only; failed cases and other precisions are left out.
TEST(MeasuredRule, GemmTflopsForTheJobRecord) {
  Machine m = machine::h200(2).with_nvlink();
  m.measurements = {figure("gemm_fp32_4096", uuid(m, 0), 50.3, "TFLOP/s"),
                    figure("gemm_fp32_8192", uuid(m, 0), 47.0, "TFLOP/s"),
                    figure("gemm_tf32_8192", uuid(m, 0), 355.2, "TFLOP/s"),
                    failed(figure("gemm_bf16_8192", uuid(m, 0), 0, "TFLOP/s"), "wrong result"),
                    figure("gemm_bf16_8192", uuid(m, 1), 703.4, "TFLOP/s"),
                    figure("gemm_fp16_8192", uuid(m, 0), 679, "TFLOP/s")};
  EXPECT_EQ(measured_gemm_tflops(m, uuid(m, 0)), (std::map<std::string, double>{{"fp32", 47.0}, {"tf32", 355.2}}));
  EXPECT_EQ(measured_gemm_tflops(m, uuid(m, 1)), (std::map<std::string, double>{{"bf16", 703.4}}));
  EXPECT_TRUE(measured_gemm_tflops(m, "GPU-none").empty());
}

}  // namespace
}  // namespace gpuenv

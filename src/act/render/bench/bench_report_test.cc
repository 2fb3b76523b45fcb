#include "act/render/bench/bench_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpuenv::bench {
namespace {

Device dev(int i) { return {i, "NVIDIA H200", "GPU-" + std::to_string(i), {9, 0}, 132, 1}; }

Result p2p(int a, int b, std::optional<double> v, BenchStatus s = BenchStatus::kOk) {
  Result r;
  r.key = "p2p", r.scope = CaseScope::kPair, r.target.devices = {dev(a), dev(b)}, r.value = v, r.status = s;
  return r;
}

TEST(BenchReport, ValuesAndLabels) {
  EXPECT_EQ(format_value(703.4, "TFLOP/s"), "703 TFLOP/s");
  EXPECT_EQ(format_value(55.37, "GB/s"), "55.4 GB/s");
  EXPECT_EQ(format_value(3.771, "us"), "3.77 us");
  EXPECT_EQ(format_value(0, "errors"), "0 errors");
  EXPECT_EQ(target_label(p2p(0, 1, 1)), "0->1");
  Result all;
  all.scope = CaseScope::kAll;
  EXPECT_EQ(target_label(all), "all");
}

TEST(BenchReport, TableWithP2pMatrixAndSkips) {
  RunInfo info{
      "2x NVIDIA H200, driver 580, CUDA 13.0", "fp-1", "t", 17.4, std::string("/db"), 3, {dev(0), dev(1), dev(2)}};
  Result gemm;
  gemm.key = "gemm_bf16_8192", gemm.metric = FigureKind::kTflops, gemm.value = 703.4, gemm.peak = 989.4;
  gemm.target.devices = {dev(0)}, gemm.detail = "verified";
  Result skipped;
  skipped.key = "gemm_fp8_8192", skipped.status = BenchStatus::kSkipped, skipped.message = "no fp8";
  skipped.target.devices = {dev(1)};
  std::string t = render_results(
      info, {gemm, p2p(0, 1, 394), p2p(1, 0, 395), p2p(0, 2, std::nullopt, BenchStatus::kWrong), skipped}, Style{});
  EXPECT_NE(t.find("0     gemm_bf16_8192          703 TFLOP/s    71 % of 989 TFLOP/s  verified"), std::string::npos)
      << t;
  std::string matrix =
      "p2p GB/s (row: from, column: to)\n           0      1      2\n0          -    394   FAIL\n"
      "1        395      -       \n2" +
      std::string(24, ' ') + "-\n";
  EXPECT_NE(t.find(matrix), std::string::npos) << t;
  EXPECT_NE(t.find("skipped:\n  1     gemm_fp8_8192      no fp8"), std::string::npos) << t;
  EXPECT_NE(t.find("took 17.4 s; stored as run 3 in /db"), std::string::npos) << t;
  nlohmann::json j = results_json(info, {gemm});
  EXPECT_EQ(j["results"][0]["percent_of_peak"].get<double>(), 100 * 703.4 / 989.4);
  EXPECT_EQ(j["devices"].size(), 3u);
  EXPECT_EQ(j["run_id"], 3);
}

// Every field of a stored row is outside text: a planted store must not
// drive the terminal. C0, C1 (U+009B) and a raw 0x9B byte all come out escaped.
TEST(BenchReport, HistoryEscapesEveryStoredField) {
  const std::string hostile = "\x1b]0;PWNED\x07\x1b[2J\xc2\x9b" "31m\x9b" "1m";
  store::HistoryRow row;
  row.command = "bench" + hostile;
  Measurement& m = row.m;
  m.key = "gemm" + hostile, m.gpu_uuid = "GPU-" + hostile, m.peer_uuid = "GPU-" + hostile;
  m.value = 1, m.unit = "GB/s" + hostile, m.status = "failed", m.detail = hostile;
  m.measured_at = "2025" + hostile, m.gpuenv_version = "0.1" + hostile;
  std::string out = render_history("1x H200" + hostile, {row});
  for (const char* raw : {"\x1b", "\x07", "\xc2\x9b", "\x9b"})
    EXPECT_EQ(out.find(raw), std::string::npos) << "raw byte " << int(static_cast<unsigned char>(raw[0])) << " in\n" << out;
  EXPECT_NE(out.find("\\x1b]0;PWNED\\x07\\x1b[2J\\u009b31m\\x9b1m"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpuenv::bench

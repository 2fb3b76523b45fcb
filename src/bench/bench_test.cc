// The registry, the filters, and how results become figures, with a fake
// Backend in place of the CUDA plugin.
#include "bench/bench.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "builders.h"
#include "fake_bench_backend.h"

namespace gpuenv::bench {
namespace {

using namespace gpuenv::testing;

std::map<std::string, std::string> skips(const std::vector<Planned>& plan) {
  std::map<std::string, std::string> out;
  for (const auto& p : plan)
    if (p.skip) out[p.c.key] = *p.skip;
  return out;
}

std::set<std::string> applies(const std::vector<Planned>& plan) {
  std::set<std::string> out;
  for (const auto& p : plan)
    if (!p.skip) out.insert(p.c.key);
  return out;
}

TEST(BenchRegistry, DefaultCasesAndKeys) {
  BenchOptions o;
  o.sizes = {1024, 2048};
  std::vector<std::string> keys;
  for (const auto& c : bench_cases(o)) keys.push_back(c.key);
  std::vector<std::string> want = {"gemm_bf16_1024",
                                   "gemm_bf16_2048",
                                   "gemm_fp16_1024",
                                   "gemm_fp16_2048",
                                   "gemm_tf32_1024",
                                   "gemm_tf32_2048",
                                   "gemm_fp32_1024",
                                   "gemm_fp32_2048",
                                   "gemm_fp8_1024",
                                   "gemm_fp8_2048",
                                   "copy_kernel",
                                   "memcpy_d2d",
                                   "h2d_pinned",
                                   "d2h_pinned",
                                   "h2d_pageable",
                                   "d2h_pageable",
                                   "launch_overhead",
                                   "launch_roundtrip",
                                   "p2p",
                                   "p2p_via_host",
                                   "nccl_all_reduce"};
  EXPECT_EQ(keys, want);
  std::set<std::string> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), keys.size());
  for (const auto& c : bench_cases(o)) EXPECT_FALSE(c.description.empty()) << c.key;
}

TEST(BenchRegistry, FiltersSayWhyACaseIsSkipped) {
  struct Row {
    const char* description;
    Machine machine;
    std::map<std::string, std::string> skipped;  // key -> part of the reason
  } rows[] = {
      {"H200: everything per GPU applies; pairs need two",
       machine::h200(),
       {{"p2p", "needs 2 or more GPUs (1 visible)"},
        {"p2p_via_host", "needs 2 or more GPUs"},
        {"nccl_all_reduce", "needs 2 or more GPUs"}}},
      {"A100: no fp8 before 8.9",
       machine::a100_nvlink_8(),
       {{"gemm_fp8_4096", "fp8 e4m3 needs compute capability 8.9 or newer (this GPU: 8.0)"},
        {"gemm_fp8_8192", "(this GPU: 8.0)"}}},
      {"T4: no bf16, tf32 or fp8",
       machine::t4(),
       {{"gemm_bf16_4096", "bf16 needs compute capability 8.0 or newer (this GPU: 7.5)"},
        {"gemm_bf16_8192", "bf16 needs"},
        {"gemm_tf32_4096", "tf32 needs"},
        {"gemm_tf32_8192", "tf32 needs"},
        {"gemm_fp8_4096", "fp8 e4m3 needs"},
        {"gemm_fp8_8192", "fp8 e4m3 needs"},
        {"p2p", "needs 2"},
        {"p2p_via_host", "needs 2"},
        {"nccl_all_reduce", "needs 2"}}},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.description);
    BenchContext ctx{&r.machine, devices_of(r.machine), BenchOptions{}};
    if (ctx.devices.size() > 1) ctx.devices.resize(1);
    auto got = skips(plan_cases(bench_cases(ctx.options), ctx));
    std::map<std::string, std::string> more = r.skipped;
    if (r.machine.gpus.size() > 1)  // cut to one GPU above
      more.insert({{"p2p", "needs 2"}, {"p2p_via_host", "needs 2"}, {"nccl_all_reduce", "needs 2"}});
    ASSERT_EQ(got.size(), more.size());
    for (const auto& [key, part] : more) {
      ASSERT_TRUE(got.count(key)) << key;
      EXPECT_NE(got[key].find(part), std::string::npos) << key << ": " << got[key];
    }
  }
}

TEST(BenchRegistry, MemoryFilter) {
  Machine m = machine::h200();
  BenchContext ctx{&m, devices_of(m), BenchOptions{}};
  ctx.devices[0].memory_total = 1ull << 29;  // 0.5 GiB
  ctx.options.sizes = {8192};
  auto got = skips(plan_cases(bench_cases(ctx.options), ctx));
  EXPECT_NE(got["gemm_fp32_8192"].find("needs 0.8 GiB of device memory (this GPU has 0.5 GiB)"), std::string::npos)
      << got["gemm_fp32_8192"];
  EXPECT_NE(got["copy_kernel"].find("needs 2.0 GiB"), std::string::npos) << got["copy_kernel"];
  EXPECT_FALSE(got.count("gemm_bf16_8192"));  // 384 MiB fits in 80 % of 512
}

TEST(BenchRegistry, PairsAndAllOverSeveralGpus) {
  Machine m = machine::h100(3).with_nvlink();
  BenchContext ctx{&m, devices_of(m), BenchOptions{}};
  ctx.options.only = {"p2p", "nccl"};
  auto plan = plan_cases(bench_cases(ctx.options), ctx);
  std::vector<std::string> targets;
  for (const auto& p : plan) {
    std::string t = p.c.key + ":";
    for (const auto& d : p.target.devices) t += std::to_string(d.ordinal);
    targets.push_back(t);
  }
  std::vector<std::string> want = {"p2p:01",
                                   "p2p:02",
                                   "p2p:10",
                                   "p2p:12",
                                   "p2p:20",
                                   "p2p:21",
                                   "p2p_via_host:01",
                                   "p2p_via_host:02",
                                   "p2p_via_host:10",
                                   "p2p_via_host:12",
                                   "p2p_via_host:20",
                                   "p2p_via_host:21",
                                   "nccl_all_reduce:012"};
  EXPECT_EQ(targets, want);
}

TEST(BenchRegistry, OnlySelectsByKeyOrPrefix) {
  Machine m = machine::h200();
  BenchContext ctx{&m, devices_of(m), BenchOptions{}};
  ctx.options.only = {"gemm_bf16", "memcpy_d2d"};
  EXPECT_EQ(applies(plan_cases(bench_cases(ctx.options), ctx)),
            (std::set<std::string>{"gemm_bf16_4096", "gemm_bf16_8192", "memcpy_d2d"}));
  ctx.options.only = {"nothing_like_this"};
  EXPECT_TRUE(plan_cases(bench_cases(ctx.options), ctx).empty());
}

TEST(BenchRun, ParametersReachTheBackend) {
  Machine m = machine::h200(2).with_nvlink();
  BenchContext ctx{&m, devices_of(m), BenchOptions{}};
  ctx.options.sizes = {4096};
  ctx.options.only = {"gemm_fp8", "h2d_pageable", "launch_roundtrip", "p2p_via_host", "nccl"};
  ctx.devices.back().ordinal = 5;  // CUDA ordinals need not be NVML indices
  FakeBackend b;
  size_t progress_calls = 0;
  auto plan = plan_cases(bench_cases(ctx.options), ctx);
  run_cases(b, ctx, plan, [&](size_t i, size_t n, const Planned&) {
    EXPECT_EQ(i, progress_calls++);
    EXPECT_EQ(n, plan.size());
  });
  EXPECT_EQ(progress_calls, plan.size());
  ASSERT_EQ(b.calls.size(), 9u);
  EXPECT_EQ(b.calls[0].op, "gemm");
  EXPECT_EQ(b.calls[0].dtype, "fp8");
  EXPECT_EQ(b.calls[0].m, 4096);
  EXPECT_EQ(b.calls[1].device, 5);
  EXPECT_EQ(b.calls[2].op, "h2d");
  EXPECT_EQ(b.calls[2].pinned, 0);
  EXPECT_EQ(b.calls[2].bytes, 256ull << 20);
  EXPECT_EQ(b.calls[4].op, "launch");
  EXPECT_EQ(b.calls[4].pinned, 1);
  EXPECT_EQ(b.calls[6].op, "p2p_via_host");
  EXPECT_EQ(b.calls[6].device, 0);
  EXPECT_EQ(b.calls[6].peer, 5);
  EXPECT_EQ(b.calls[7].device, 5);
  EXPECT_EQ(b.calls[7].peer, 0);
  EXPECT_EQ(b.calls[8].op, "all_reduce");
  EXPECT_EQ(b.calls[8].ndevices, 2);
}

TEST(BenchRun, FiguresFromSamples) {
  Machine m = machine::h200(4).with_nvlink();
  BenchContext ctx{&m, devices_of(m), BenchOptions{}};
  ctx.options.sizes = {8192};
  ctx.options.only = {"gemm_bf16", "memcpy_d2d", "h2d_pinned", "launch_overhead", "nccl"};
  ctx.devices.resize(4);
  FakeBackend b;
  std::map<std::string, Result> by_key;
  for (auto& r : run_cases(b, ctx, plan_cases(bench_cases(ctx.options), ctx), nullptr))
    if (r.target.devices[0].ordinal == 0 || r.scope == CaseScope::kAll) by_key[r.key] = r;
  const Result& gemm = by_key["gemm_bf16_8192"];
  EXPECT_EQ(gemm.unit(), "TFLOP/s");
  EXPECT_NEAR(*gemm.value, 2.0 * 8192 * 8192 * 8192 / 1e-3 / 1e12, 1e-6);  // median 1 ms
  EXPECT_DOUBLE_EQ(*gemm.peak, 989.4);
  EXPECT_DOUBLE_EQ(*by_key["memcpy_d2d"].value, 1000);  // 1e9 bytes per ms
  EXPECT_DOUBLE_EQ(*by_key["memcpy_d2d"].peak, 4800);
  EXPECT_NEAR(*by_key["h2d_pinned"].peak, 63.0, 0.01);  // Gen5 x16
  EXPECT_EQ(by_key["launch_overhead"].unit(), "us");
  EXPECT_DOUBLE_EQ(*by_key["launch_overhead"].value, 1000);
  EXPECT_FALSE(by_key["launch_overhead"].peak);
  EXPECT_DOUBLE_EQ(*by_key["nccl_all_reduce"].value, 1000 * 2.0 * 3 / 4);  // busbw, 4 ranks
}

TEST(BenchRun, WrongAndFailedResults) {
  Machine m = machine::h200();
  BenchContext ctx{&m, devices_of(m), BenchOptions{}};
  ctx.options.only = {"gemm_bf16_4096", "memcpy_d2d", "copy_kernel"};
  FakeBackend b;
  b.status["gemm"] = GPUENV_BENCH_WRONG;
  b.status["memcpy_d2d"] = GPUENV_BENCH_ERROR;
  auto results = run_cases(b, ctx, plan_cases(bench_cases(ctx.options), ctx), nullptr);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].status, BenchStatus::kWrong);
  EXPECT_TRUE(results[0].failed());
  EXPECT_EQ(results[1].status, BenchStatus::kOk);
  EXPECT_EQ(results[2].status, BenchStatus::kError);
  EXPECT_FALSE(results[2].value);
  auto wrong = to_measurement(results[0], "2025-01-02T03:04:05Z");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, "failed");
  EXPECT_FALSE(wrong->value);
  EXPECT_EQ(wrong->detail, "wrong result: fake");
  EXPECT_EQ(wrong->gpu_uuid, *m.gpus[0].uuid);
}

TEST(BenchRun, Measurements) {
  Machine m = machine::h200(2).with_nvlink();
  BenchContext ctx{&m, devices_of(m), BenchOptions{}};
  ctx.options.only = {"memcpy_d2d", "p2p", "nccl"};
  FakeBackend b;
  std::vector<Measurement> ms;
  for (const auto& r : run_cases(b, ctx, plan_cases(bench_cases(ctx.options), ctx), nullptr))
    if (auto x = to_measurement(r, "2025-01-02T03:04:05Z")) ms.push_back(*x);
  ASSERT_EQ(ms.size(), 2u + 2 + 2 + 1);
  EXPECT_EQ(ms[0].key, "memcpy_d2d");
  EXPECT_EQ(ms[0].unit, "GB/s");
  EXPECT_DOUBLE_EQ(*ms[0].percent_of_peak(), 1000.0 / 4800 * 100);
  EXPECT_EQ(ms[0].measured_at, "2025-01-02T03:04:05Z");
  EXPECT_EQ(ms[0].gpuenv_version, GPUENV_VERSION);
  EXPECT_EQ(ms[2].key, "p2p");
  EXPECT_EQ(ms[2].gpu_uuid, *m.gpus[0].uuid);
  EXPECT_EQ(ms[2].peer_uuid, m.gpus[1].uuid);
  EXPECT_EQ(ms[6].key, "nccl_all_reduce");
  EXPECT_EQ(ms[6].gpu_uuid, "");
  EXPECT_FALSE(ms[6].peer_uuid);
  Result skipped;
  skipped.status = BenchStatus::kSkipped;
  EXPECT_FALSE(to_measurement(skipped, "x"));
}

TEST(BenchRun, MigDeviceHasNoPeak) {
  Machine m = machine::a100_mig();
  Device d{0, "NVIDIA A100-SXM4-80GB MIG 2g.20gb", m.gpus[0].mig_devices[0].uuid, {8, 0}, 28, 20ull << 30};
  d.uuid.replace(0, 4, "GPU-");  // CUDA spells MIG UUIDs GPU-...
  BenchContext ctx{&m, {d}, BenchOptions{}};
  bool mig = false;
  EXPECT_EQ(ctx.gpu_of(d, &mig), &m.gpus[0]);
  EXPECT_TRUE(mig);
  ctx.options.only = {"memcpy_d2d"};
  ctx.options.copy_bytes = 1 << 20;
  FakeBackend b;
  auto results = run_cases(b, ctx, plan_cases(bench_cases(ctx.options), ctx), nullptr);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].peak);
}

TEST(BenchRun, ParseSizes) {
  std::vector<int> sizes;
  std::string err;
  EXPECT_TRUE(parse_sizes("4096,8192", &sizes, &err));
  EXPECT_EQ(sizes, (std::vector<int>{4096, 8192}));
  EXPECT_TRUE(parse_sizes("1024", &sizes, &err));
  EXPECT_EQ(sizes, (std::vector<int>{1024}));
  for (const char* bad : {"", "4096,", ",4096", "4k", "8", "100000", "-1", "4096;8192", "99999999999"}) {
    sizes = {1};
    EXPECT_FALSE(parse_sizes(bad, &sizes, &err)) << bad;
    EXPECT_EQ(sizes, (std::vector<int>{1})) << bad;
    EXPECT_NE(err.find("expected sizes from 16 to 65536"), std::string::npos) << err;
  }
}

TEST(BenchRun, CheckCases) {
  BenchOptions o;
  std::vector<std::string> quick, lng;
  for (const auto& c : check_cases(o, false)) quick.push_back(c.key);
  for (const auto& c : check_cases(o, true)) lng.push_back(c.key);
  EXPECT_EQ(quick, (std::vector<std::string>{"check_gemm", "check_copy"}));
  EXPECT_EQ(lng, (std::vector<std::string>{"check_gemm", "check_copy", "sustained_gemm", "memtest"}));
  Machine t4 = machine::t4();
  BenchContext ctx{&t4, devices_of(t4), o};
  FakeBackend b;
  run_cases(b, ctx, plan_cases(check_cases(o, true), ctx), nullptr);
  ASSERT_EQ(b.calls.size(), 4u);
  EXPECT_EQ(b.calls[0].dtype, "fp16");  // no bf16 on Turing
  EXPECT_EQ(b.calls[1].op, "copy_kernel");
  EXPECT_EQ(b.calls[2].op, "sustained_gemm");
  EXPECT_EQ(b.calls[3].op, "memtest");
}

}  // namespace
}  // namespace gpuenv::bench

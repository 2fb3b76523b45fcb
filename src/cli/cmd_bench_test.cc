// gpuenv bench and gpuenv check end to end: the real binary, the real
// dlopen of a plugin (the stand-in tests/fake_bench), the fake NVML, and a
// store in a temporary directory. And the promise that the gpuenv binary
// itself links no CUDA library.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "process.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv {
namespace {

namespace fs = std::filesystem;
using testing::ProcessOptions;
using testing::run_gpuenv;
using testing::run_process;

using testing::contains;

ProcessOptions fake_gpu(std::map<std::string, std::string> extra = {}) {
  std::string tmpl = (fs::temp_directory_path() / "gpuenv-bench-XXXXXX").string();
  ProcessOptions o;
  o.env = {{"GPUENV_BENCH_PLUGIN", (test_paths::fake_dir() + "/libgpuenv-bench.so")},
           {"GPUENV_NVML_LIBRARY", (test_paths::fake_dir() + "/libnvidia-ml.so.1")},
           {"FAKE_NVML_SCENARIO", (test_paths::tests_dir() + "/fake_nvml/scenarios/h200.txt")},
           {"GPUENV_CACHE_ROOT", mkdtemp(tmpl.data())}};
  for (const auto& [k, v] : extra) o.env[k] = v;
  return o;
}

nlohmann::json result(const nlohmann::json& j, const std::string& key) {
  for (const auto& r : j["results"])
    if (r["key"] == key) return r;
  return nullptr;
}

TEST(BenchCli, RunsThroughThePluginAndStoresTheFigures) {
  ProcessOptions o = fake_gpu();
  auto r = run_gpuenv({"bench", "--json", "--sizes", "1024", "--trials", "3"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["devices"].size(), 1u);
  auto gemm = result(j, "gemm_bf16_1024");
  ASSERT_FALSE(gemm.is_null());
  EXPECT_EQ(gemm["status"], "ok");
  EXPECT_NEAR(gemm["value"].get<double>(), 2.0 * 1024 * 1024 * 1024 / 1.01e-3 / 1e12, 1e-9);  // median 1.01 ms
  EXPECT_EQ(gemm["peak"], 989.4);  // the H200's, matched through NVML by UUID
  EXPECT_EQ(gemm["samples_s"].size(), 3u);
  EXPECT_EQ(result(j, "p2p")["status"], "skipped");
  EXPECT_EQ(result(j, "p2p")["message"], "needs 2 or more GPUs (1 visible)");
  EXPECT_TRUE(j["run_id"].is_number());
  EXPECT_TRUE(fs::exists(o.env["GPUENV_CACHE_ROOT"] + "/gpuenv.db"));

  auto h = run_gpuenv({"bench", "--history", "--json"}, o);
  ASSERT_EQ(h.exit_code, 0) << h.err;
  auto hist = nlohmann::json::parse(h.out);
  size_t ran = 0;
  for (const auto& x : j["results"]) ran += x["status"] != "skipped";
  EXPECT_EQ(hist["measurements"].size(), ran);
  auto text = run_gpuenv({"bench", "--history"}, o);
  EXPECT_TRUE(contains(text.out, "gemm_bf16_1024  GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d10")) << text.out;
}

// One cache root for the compile caches and the store: --cache-root moves
// both, and what bench stores there is what sensing reads back.
TEST(BenchCli, TheStoreLivesUnderTheCacheRoot) {
  ProcessOptions o = fake_gpu();
  std::string root = o.env["GPUENV_CACHE_ROOT"] + "/flag";
  auto r = run_gpuenv({"bench", "--only", "memcpy_d2d", "--sizes", "256", "--cache-root", root}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(root + "/gpuenv.db"));
  EXPECT_FALSE(fs::exists(o.env["GPUENV_CACHE_ROOT"] + "/gpuenv.db"));
  auto detect = run_gpuenv({"detect", "--json", "--cache-root", root}, o);
  ASSERT_EQ(detect.exit_code, 0) << detect.err;
  EXPECT_FALSE(nlohmann::json::parse(detect.out)["measurements"].empty()) << detect.out;
  auto env = run_gpuenv({"env", "--format", "json", "--cache-root", root}, o);
  EXPECT_TRUE(contains(env.out, "\"CUDA_CACHE_PATH\": \"" + root + "/cuda/")) << env.out;

  ProcessOptions xdg = fake_gpu({{"GPUENV_CACHE_ROOT", ""}, {"XDG_CACHE_HOME", o.env["GPUENV_CACHE_ROOT"] + "/xdg"}});
  ASSERT_EQ(run_gpuenv({"bench", "--only", "memcpy_d2d", "--sizes", "256"}, xdg).exit_code, 0);
  EXPECT_TRUE(fs::exists(xdg.env["XDG_CACHE_HOME"] + "/gpuenv/gpuenv.db"));
}

TEST(BenchCli, TableAndExitStatusOnAWrongResult) {
  auto r = run_gpuenv({"bench", "--only", "gemm_bf16,memcpy_d2d", "--sizes", "256", "--no-store"},
                      fake_gpu({{"FAKE_BENCH_WRONG", "gemm"}}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "gpuenv bench: 1x NVIDIA H200, driver 580.95.05, CUDA 13.0")) << r.out;
  EXPECT_TRUE(contains(r.out, "gemm_bf16_256")) << r.out;
  EXPECT_TRUE(contains(r.out, "WRONG: 7 of 1024 entries are wrong (fake)")) << r.out;
  EXPECT_TRUE(contains(r.out, "% of 4800 GB/s")) << r.out;
  EXPECT_FALSE(contains(r.out, "gemm_fp16")) << r.out;
  EXPECT_FALSE(contains(r.out, "stored as run")) << r.out;
}

TEST(BenchCli, WithoutThePluginSaysHowToGetIt) {
  auto r = run_gpuenv({"bench"}, fake_gpu({{"GPUENV_BENCH_PLUGIN", "/nonexistent/libgpuenv-bench.so"}}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "cannot load the CUDA plugin libgpuenv-bench.so (/nonexistent/libgpuenv-bench.so"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "GPUENV_BENCH_PLUGIN")) << r.err;
  auto bad = run_gpuenv({"bench"}, fake_gpu({{"FAKE_BENCH_DEVICE_ERROR", "1"}}));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(contains(bad.err, "no CUDA-capable device")) << bad.err;
}

TEST(BenchCli, UsageErrors) {
  EXPECT_EQ(run_gpuenv({"bench", "--sizes", "4k"}, fake_gpu()).exit_code, 2);
  EXPECT_EQ(run_gpuenv({"bench", "--trials", "0"}, fake_gpu()).exit_code, 2);
  EXPECT_EQ(run_gpuenv({"bench", "--machine", "x.json"}, fake_gpu()).exit_code, 2);
  EXPECT_EQ(run_gpuenv({"check", "--quick", "--long"}, fake_gpu()).exit_code, 2);
  auto r = run_gpuenv({"bench", "--device", "7"}, fake_gpu());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "--device: no such CUDA device (1 visible)")) << r.err;
}

TEST(CheckCli, QuickPassesAndFails) {
  ProcessOptions o = fake_gpu();
  auto r = run_gpuenv({"check"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "PASS  GPU 0 check_gemm")) << r.out;
  EXPECT_TRUE(contains(r.out, "gpuenv check --quick: passed")) << r.out;
  auto bad = run_gpuenv({"check", "--json"}, fake_gpu({{"FAKE_BENCH_WRONG", "copy_kernel"}}));
  EXPECT_EQ(bad.exit_code, 1);
  auto j = nlohmann::json::parse(bad.out);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["level"], "quick");
  auto none = run_gpuenv({"check"}, fake_gpu({{"GPUENV_BENCH_PLUGIN", "/nonexistent/p.so"}}));
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(contains(none.out, "FAIL  GPU checks")) << none.out;
}

// On the four sick H100s doctor calls broken, check fails, naming each
// fault; the plugin's devices are the scenario's GPUs, so the watch finds them.
TEST(CheckCli, SickGpusFail) {
  ProcessOptions o = fake_gpu({{"FAKE_NVML_SCENARIO", (test_paths::tests_dir() + "/fake_nvml/scenarios/h100_sick_4.txt")}});
  auto r = run_gpuenv({"check", "--no-color"}, o);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  for (const char* line : {"FAIL  GPU 0 clocks", "FAIL  GPU 1 memory", "WARN  GPU 2 memory", "FAIL  GPU 3 memory",
                           "FAIL  GPU 2 fabric", "FAIL  GPU 3 fabric", "PASS  GPU 3 check_gemm",
                           "gpuenv check --quick: FAILED"})
    EXPECT_TRUE(contains(r.out, line)) << line << "\n" << r.out;
  auto l = run_gpuenv({"check", "--long", "--duration", "1", "--json"}, o);
  EXPECT_EQ(l.exit_code, 1) << l.out << l.err;
  auto j = nlohmann::json::parse(l.out);
  ASSERT_EQ(j["watch"].size(), 4u) << l.out;
  EXPECT_EQ(j["watch"][1]["uuid"], "GPU-h1000001-0000-4000-8000-000000000001");
  EXPECT_GT(j["watch"][1]["samples"].get<int>(), 0);
}

TEST(CheckCli, LongWatchesThroughNvml) {
  auto r = run_gpuenv({"check", "--long", "--duration", "1", "--json"}, fake_gpu());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["level"], "long");
  ASSERT_EQ(j["watch"].size(), 1u);
  EXPECT_EQ(j["watch"][0]["uuid"], "GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d10");
  EXPECT_GE(j["watch"][0]["samples"].get<int>(), 2);
  std::vector<std::string> keys;
  for (const auto& x : j["results"]) keys.push_back(x["key"]);
  EXPECT_EQ(keys, (std::vector<std::string>{"check_gemm", "check_copy", "sustained_gemm", "memtest"}));
}

std::string dynamic_section(const std::string& path) {
  auto r = run_process({"readelf", "-d", path});
  return r.exit_code == 0 ? r.out : "";
}

TEST(BenchPlugin, TheGpuenvBinaryLinksNoCudaLibrary) {
  std::string d = dynamic_section(test_paths::gpuenv_bin());
  ASSERT_FALSE(d.empty()) << "readelf -d " << test_paths::gpuenv_bin() << " printed nothing (binutils installed?)";
  for (const char* lib : {"libcuda", "libcudart", "libcublas", "libnccl", "libnvidia-ml", "libnvrtc"})
    EXPECT_FALSE(contains(d, lib)) << lib << " in\n" << d;
}

#ifdef GPUENV_HAS_BENCH_PLUGIN  // built with a CUDA toolkit
TEST(BenchPlugin, ThePluginNeedsOnlyTheDriverAtRunTime) {
  std::string plugin = (fs::path(test_paths::gpuenv_bin()).parent_path() / "libgpuenv-bench.so").string();
  ASSERT_TRUE(fs::exists(plugin)) << plugin;
  std::string d = dynamic_section(plugin);
  ASSERT_FALSE(d.empty()) << "readelf -d " << plugin << " printed nothing (binutils installed?)";
  for (const char* lib : {"libcuda.so", "libcudart", "libcublas", "libnccl"})
    EXPECT_FALSE(contains(d, lib)) << lib << " in\n" << d;  // cudart static; the rest dlopened
  auto syms = run_process({"nm", "-D", "--defined-only", plugin});
  EXPECT_TRUE(contains(syms.out, " T gpuenv_bench_plugin")) << syms.out;
  EXPECT_FALSE(contains(syms.out, "cudaMalloc")) << "cudart's symbols leak out of the plugin";
}
#endif

}  // namespace
}  // namespace gpuenv

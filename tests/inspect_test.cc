// End to end: `gpuenv inspect` on the committed fixtures (tests/fatbins/)
// against the committed machine snapshots (tests/machines/).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fatbin_builders.h"
#include "process.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv {
namespace {

using testing::run_gpuenv;
using testing::write_temp_file;

std::string fixture(const std::string& name) { return (test_paths::tests_dir() + "/fatbins/") + name; }
std::string machine(const std::string& name) { return (test_paths::tests_dir() + "/machines/") + name + ".json"; }

using testing::contains;

testing::ProcessResult inspect(std::vector<std::string> args, const std::string& m = "") {
  args.insert(args.begin(), "inspect");
  if (!m.empty()) args.insert(args.end(), {"--machine", machine(m)});
  return run_gpuenv(args);
}

TEST(Inspect, CountsPerArchitectureAndRunsNatively) {
  auto r = inspect({fixture("sm80_sm90_ptx90.fatbin")}, "h200");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, fixture("sm80_sm90_ptx90.fatbin") +
                       ": fatbin, 1 fatbin, 3 entries (1 compressed)\n"
                       "  sm_80: 1 cubin\n"
                       "  sm_90: 1 cubin\n"
                       "  compute_90 PTX (ISA 9.0): 1, 1 compressed\n"
                       "  GPU 0 NVIDIA H200 (Hopper, 9.0): native: runs the sm_90 cubin natively\n");
}

TEST(Inspect, ExitCodes) {
  struct Row {
    std::string file, machine;
    int exit_code;
    std::string says;
  } rows[] = {
      {"sm80_sm90_ptx90.fatbin", "a100x8-nvlink", 0, "GPU 0-7 NVIDIA A100-SXM4-80GB (Ampere, 8.0): native: runs the sm_80 cubin"},
      {"sm80_sm90_ptx90.fatbin", "rtx5090", 4, "PTX JIT only: no cubin for 12.0; the driver JIT-compiles the compute_90 PTX"},
      {"sm80_sm90_ptx90.fatbin", "t4", 1, "cannot run: no cubin or PTX usable on 7.5 (it has: sm_80, sm_90, compute_90)"},
      {"sm90a.fatbin", "h200", 0, "native: runs the sm_90a cubin natively"},
      {"sm90a.fatbin", "b200x8", 1, "no kernel image is available for execution on the device"},
      {"sm100f.fatbin", "b200x8", 0, "GPU 0-7 NVIDIA B200 (Blackwell, 10.0): native: runs the sm_100f cubin"},
      {"sm100f.fatbin", "rtx5090", 1, "cannot run"},
      {"sm75_sm86.o", "rtx3090-rtx4090", 0, "GPU 1 NVIDIA GeForce RTX 4090 (Ada Lovelace, 8.9): native: runs the sm_86 cubin"},
      {"sm75_sm86.o", "jetson-orin", 1, "GPU 0 Orin (Ampere, 8.7): cannot run"},
      {"sm89_ptx89.so", "h200", 4, "compute_89"},
      {"rdc_sm80.o", "h200", 4, "__nv_relfatbin only (device-link input)"},
      {"sm80_sm90_ptx90.fatbin", "none", 0, "No NVIDIA GPU found"},
  };
  for (const Row& row : rows) {
    auto r = inspect({fixture(row.file)}, row.machine);
    EXPECT_EQ(r.exit_code, row.exit_code) << row.file << " on " << row.machine << ": " << r.out << r.err;
    EXPECT_TRUE(contains(r.out, row.says)) << row.file << " on " << row.machine << ": " << r.out;
  }
}

TEST(Inspect, WithoutAnyGpuExitsZero) {
  auto r = inspect({fixture("sm90a.fatbin")});  // live sensing, no NVML: no GPU
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "sm_90a: 1 cubin")) << r.out;
  EXPECT_TRUE(contains(r.out, "compute_90a PTX (ISA 9.0): 1")) << r.out;
  EXPECT_TRUE(contains(r.out, "No NVIDIA GPU found")) << r.out;
}

TEST(Inspect, Json) {
  auto r = inspect({"--json", fixture("compressed.fatbin"), fixture("sm75_sm86.o")}, "rtx3090-rtx4090");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["exit_code"], 0);
  const auto& f = j["files"][0];
  EXPECT_EQ(f["format"], "fatbin");
  EXPECT_EQ(f["fatbins"], 1);
  EXPECT_EQ(f["entries"], 3);
  EXPECT_EQ(f["compressed"], 3);
  EXPECT_EQ(f["cubins"]["sm_80"]["count"], 1);
  EXPECT_EQ(f["cubins"]["sm_80"]["compressed"], 1);
  EXPECT_EQ(f["ptx"]["compute_90"]["isa"], nlohmann::json::array({"9.0"}));
  EXPECT_EQ(f["verdicts"][0]["verdict"], "native");
  EXPECT_EQ(f["verdicts"][0]["image"], "sm_80");
  EXPECT_EQ(f["verdicts"][1]["gpu"], 1);
  const auto& o = j["files"][1];
  EXPECT_EQ(o["format"], "elf");
  EXPECT_EQ(o["section"], ".nv_fatbin");
  EXPECT_EQ(o["cubins"], nlohmann::json({{"sm_75", {{"count", 1}, {"compressed", 0}}},
                                         {"sm_86", {{"count", 1}, {"compressed", 0}}}}));
  EXPECT_EQ(o["verdicts"][1]["image"], "sm_86");
}

TEST(Inspect, CountsFatbinsWithoutAnImage) {
  // The library's own fatbin has sm_89 and compute_89; the static CUDA
  // runtime's has only an sm_89 cubin, which no 9.0 GPU can load.
  auto r = inspect({fixture("sm89_ptx89.so")}, "h200");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.out, "      1 of 2 fatbins have no image for 9.0 (built only for other targets)")) << r.out;
  auto j = nlohmann::json::parse(inspect({"--json", fixture("sm89_ptx89.so")}, "h200").out);
  const auto& v = j["files"][0]["verdicts"][0];
  EXPECT_EQ(v["verdict"], "ptx_jit");
  EXPECT_EQ(v["image"], "compute_89");
  EXPECT_EQ(v["fatbins_without_image"], 1);
  EXPECT_EQ(v["fatbins_jit"], 1);
}

TEST(Inspect, BadFilesExit3AndTheRestIsStillReported) {
  auto r = inspect({"/nonexistent/libx.so", fixture("kernel.cu"), fixture("sm90a.fatbin")}, "h200");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err, "gpuenv: open(/nonexistent/libx.so): No such file or directory")) << r.err;
  EXPECT_TRUE(contains(r.err, "kernel.cu: neither an ELF file nor a fatbin")) << r.err;
  EXPECT_TRUE(contains(r.out, "sm_90a: 1 cubin")) << r.out;
  auto j = inspect({"--json", "/nonexistent/libx.so"}, "h200");
  EXPECT_EQ(j.exit_code, 3);
  EXPECT_EQ(nlohmann::json::parse(j.out)["files"][0]["error"],
            "open(/nonexistent/libx.so): No such file or directory");
}

TEST(Inspect, TruncatedFileNamesTheOffset) {
  std::ifstream in(fixture("sm80_sm90_ptx90.fatbin"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string cut = write_temp_file("cut.fatbin", bytes.substr(0, 3000));
  auto r = inspect({cut}, "h200");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err, cut + ": offset 0x0: fatbin of 16 + ")) << r.err;
}

TEST(Inspect, NoCudaCodeAndUsage) {
  auto r = inspect({test_paths::gpuenv_bin()}, "h200");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, test_paths::gpuenv_bin() + ": no CUDA code (no .nv_fatbin section)\n");
  auto cubin = inspect({fixture("sm80.cubin")}, "h200");
  EXPECT_EQ(cubin.exit_code, 0) << cubin.err;
  EXPECT_EQ(cubin.out, fixture("sm80.cubin") +
                           ": a cubin itself (ELF machine EM_CUDA), not a file that embeds fatbins: "
                           "nothing to count\n");
  EXPECT_EQ(run_gpuenv({"inspect"}).exit_code, 2);  // a file is required
  auto h = run_gpuenv({"inspect", "--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_TRUE(contains(h.out, "--machine")) << h.out;
}

#if defined(__SANITIZE_ADDRESS__)
#define GPUENV_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUENV_TEST_ASAN 1
#endif
#endif

// gpuenv starts in about 30 MiB of address space (ulimit -v; gRPC,
// OpenSSL and libyaml are linked in); inspect of the files below needs a
// few MiB more, and a 12 MB snapshot several times that.
constexpr int kInspectMib = 256;
constexpr int kOomMib = 40;

// `gpuenv ARGS` in an address space of `mib` MiB (ulimit -v). An ASan build
// runs it without the limit: ASan reserves terabytes of shadow up front.
testing::ProcessResult run_within(int mib, std::vector<std::string> args,
                                  testing::ProcessOptions opts = {}) {
#ifdef GPUENV_TEST_ASAN
  (void)mib;
  return run_gpuenv(args, opts);
#else
  std::string cmd = "ulimit -v " + std::to_string(mib * 1024) + " && exec \"$0\" \"$@\"";
  args.insert(args.begin(), {"sh", "-c", cmd, test_paths::gpuenv_bin()});
  opts.env.emplace("GPUENV_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");  // as run_gpuenv
  opts.env.emplace("GPUENV_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
  return testing::run_process(args, opts);
#endif
}

std::string bytes_file(const std::string& name, const testing::fatbin::Bytes& b) {
  return write_temp_file(name, std::string(b.begin(), b.end()));
}

// Issue 12: 4,096 section headers over one .nv_fatbin made a 512 KB file
// cost 8.9 s and 923 MB; a 2 MB one ended in bad_alloc (signal 6). Each
// byte is parsed once now: the entries are the region's 4,000 (not 4,096
// times as many), in an address space the bug's copies could not fit.
TEST(Inspect, RepeatedSectionsCostTheFileSizeNotTheirProduct) {
  for (int entries : {4000, 16000}) {  // 512 KB and 1.3 MB
    std::string file = bytes_file("bomb.so", testing::fatbin::repeated_sections(entries, 4096));
    auto r = run_within(kInspectMib, {"inspect", "--json", file, "--machine", machine("a100x8-nvlink")});
    ASSERT_EQ(r.exit_code, 0) << r.err;  // sm_80 cubins, native on an A100
    auto j = nlohmann::json::parse(r.out)["files"][0];
    EXPECT_EQ(j["entries"], entries);
    EXPECT_EQ(j["fatbins"], 1);
  }
}

// The same file as a venv's libtorch_cuda.so made plain doctor take 15 s;
// it is read once there too, within the same address space.
TEST(Inspect, DoctorReadsARepeatedSectionsLibtorchCudaOnce) {
  std::string venv = std::filesystem::path(write_temp_file("x", "")).parent_path() / "venv";
  std::string torch = venv + "/lib/python3.11/site-packages/torch";
  std::filesystem::create_directories(torch + "/lib");
  std::ofstream(venv + "/pyvenv.cfg") << "home = /usr/bin\n";
  std::ofstream(torch + "/version.py") << "__version__ = '2.9.0+cu128'\ncuda = '12.8'\n";
  auto b = testing::fatbin::repeated_sections(16000, 4096);
  std::ofstream(torch + "/lib/libtorch_cuda.so", std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), b.size());
  testing::ProcessOptions o;
  o.env["VIRTUAL_ENV"] = venv;
  auto r = run_within(kInspectMib, {"doctor"}, o);
  EXPECT_EQ(r.term_signal, 0) << r.err;
  EXPECT_FALSE(contains(r.err, "out of memory")) << r.err;
  EXPECT_NE(r.exit_code, -1) << "killed at the timeout";
}

// An allocation that fails is a message and exit 1, not std::terminate's
// abort: a snapshot of 12 MB (JSON parsed: several times that) does not
// fit in 40 MiB. Not in the ASan build: ASan cannot run under ulimit -v.
#ifndef GPUENV_TEST_ASAN
TEST(Inspect, OutOfMemoryIsAMessageNotAnAbort) {
  std::string big = write_temp_file("big.json", "{\"schema_version\": 1, \"pad\": \"" +
                                                    std::string(12 << 20, 'x') + "\"}");
  auto r = run_within(kOomMib, {"inspect", fixture("sm90a.fatbin"), "--machine", big});
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "gpuenv: out of memory")) << r.err;
}
#endif

}  // namespace
}  // namespace gpuenv

// The CUDA driver path: cuInit failures as Problems, UUID spelling, and the
// table of codes with its documentation.
#include "sense/cuda/cuda.h"

#include <gtest/gtest.h>

#include <set>

#include "sense/nvml/nvml_test_support.h"
#include "test_paths.h"

namespace gpuenv {
namespace {

using testing::FakeRun;

using CudaInitErrors = testing::FakeNvidiaTest;

struct CuInitRow {
  int rc;
  const char* code;
  const char* name;
  const char* fix_hint;
};

const CuInitRow kRows[] = {
    {3, "cuda_not_initialized", "CUDA_ERROR_NOT_INITIALIZED", "dmesg"},
    {34, "cuda_stub_library", "CUDA_ERROR_STUB_LIBRARY", "stubs directory"},
    {35, "cuda_insufficient_driver", "CUDA_ERROR_INSUFFICIENT_DRIVER", "upgrade the NVIDIA driver"},
    {100, "cuda_no_device", "CUDA_ERROR_NO_DEVICE", "CUDA_VISIBLE_DEVICES"},
    {802, "cuda_system_not_ready", "CUDA_ERROR_SYSTEM_NOT_READY", "nvidia-fabricmanager"},
    {803, "cuda_driver_mismatch", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cuda-compat"},
    {804, "cuda_compat_not_supported", "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "upgrade the NVIDIA driver instead"},
    {999, "cuda_unknown", "CUDA_ERROR_UNKNOWN", "reboot"},
};

// NVML is missing (Jetson-like), so the CUDA driver is the fallback.
TEST_F(CudaInitErrors, EachCodeHasItsMessageAndFix) {
  for (const CuInitRow& row : kRows) {
    SCOPED_TRACE(row.rc);
    std::string path = write_scenario(
        "system cuda=12080\ngpu name=X\nfault cuinit=" + std::to_string(row.rc) + "\n",
        std::to_string(row.rc));
    Machine m = sense(FakeRun().nvml(testing::kNoNvml).fake_cuda(path));
    ASSERT_EQ(m.nvidia.problems.size(), 2u);
    const Problem& p = m.nvidia.problems[1];
    EXPECT_EQ(p.source, "cuda");
    EXPECT_EQ(p.code, row.code);
    EXPECT_EQ(p.message.rfind("cuInit failed: ", 0), 0u) << p.message;
    EXPECT_NE(p.message.find(std::string("(") + row.name + " = " + std::to_string(row.rc) + ")"),
              std::string::npos)
        << p.message;
    EXPECT_NE(p.fix.find(row.fix_hint), std::string::npos) << p.fix;
    EXPECT_TRUE(m.gpus.empty());
    EXPECT_EQ(m.nvidia.cuda_driver_version, 12080);
    EXPECT_EQ(m.nvidia.cuda_init_result, row.rc);
    EXPECT_EQ(m.nvidia.cuda_library, testing::kFakeCuda);
  }
}

TEST_F(CudaInitErrors, InitResultIsZeroWhenCuInitWorks) {
  Machine m = sense(FakeRun().nvml(testing::kNoNvml).fake_cuda(testing::scenario("jetson_orin")));
  EXPECT_EQ(m.nvidia.cuda_init_result, 0);
  EXPECT_EQ(m.nvidia.cuda_library, testing::kFakeCuda);
  EXPECT_EQ(m.gpus.size(), 1u);
}

TEST_F(CudaInitErrors, InitResultIsUnknownWhenCudaIsNotTried) {
  Machine m = sense(FakeRun().scenario(testing::scenario("h200")).fake_cuda(
      testing::scenario("h200")));  // NVML answers; no --cuda
  EXPECT_EQ(m.nvidia.cuda_init_result, std::nullopt);
  EXPECT_EQ(m.nvidia.cuda_library, std::nullopt);
}

TEST_F(CudaInitErrors, InitResultIsUnknownWhenTheLibraryDoesNotLoad) {
  for (const std::string& library : {testing::kNoCuda, testing::kFakeNvml}) {
    Machine m = sense(FakeRun().nvml(testing::kNoNvml).cuda(library));
    EXPECT_EQ(m.nvidia.cuda_init_result, std::nullopt) << library;
    EXPECT_EQ(m.nvidia.cuda_library, std::nullopt) << library;
  }
}

TEST_F(CudaInitErrors, FabricManagerMissingOnAnNvswitchMachine) {
  std::string path = write_scenario("system cuda=12080\nfault cuinit=802\n");
  Machine m = sense(FakeRun().nvml(testing::kNoNvml).fake_cuda(path));
  ASSERT_EQ(m.nvidia.problems.size(), 2u);
  EXPECT_EQ(m.nvidia.problems[1].message,
            "cuInit failed: the system is not yet initialized: on an NVSwitch machine (HGX, DGX) "
            "the NVIDIA Fabric Manager has not set up the NVLink fabric "
            "(CUDA_ERROR_SYSTEM_NOT_READY = 802)");
}

TEST_F(CudaInitErrors, WithCudaOnAWorkingNvmlKeepsNvmlsAnswer) {
  std::string cuda = write_scenario("system cuda=13000\nfault cuinit=802\n");
  Machine m = sense(FakeRun().scenario(testing::scenario("h200")).fake_cuda(cuda).with_cuda());
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_EQ(m.gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(m.gpus[0].multiprocessor_count, std::nullopt);
  ASSERT_EQ(m.nvidia.problems.size(), 1u);
  EXPECT_EQ(m.nvidia.problems[0].code, "cuda_system_not_ready");
  EXPECT_EQ(m.nvidia.cuda_init_result, 802);
}

TEST_F(CudaInitErrors, NotACudaLibrary) {
  Machine m = sense(FakeRun().nvml(testing::kNoNvml).cuda(testing::kFakeNvml));
  ASSERT_EQ(m.nvidia.problems.size(), 2u);
  EXPECT_EQ(m.nvidia.problems[1].code, "cuda_symbol_missing");
  EXPECT_EQ(m.nvidia.problems[1].message,
            testing::kFakeNvml + " is not a usable CUDA driver: it exports no cuInit");
}

TEST(CudaUuid, SpelledLikeNvml) {
  cuda::Uuid u{};
  const unsigned char bytes[16] = {0x0e, 0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60,
                                   0x71, 0x82, 0x93, 0xa4, 0xb5, 0xc6, 0xd7, 0xe8};
  for (int i = 0; i < 16; ++i) u.bytes[i] = static_cast<char>(bytes[i]);
  EXPECT_EQ(format_cuda_uuid(u), "GPU-0e0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8");
}

TEST(CudaErrorTable, CodesAreStableAndDocumented) {
  std::string doc;
  for (const std::string& line : testing::read_lines((test_paths::tests_dir() + "/../docs/nvml-errors.md")))
    doc += line + "\n";
  std::set<std::string> codes;
  for (const CudaError& e : cuda_errors()) {
    SCOPED_TRACE(e.code);
    EXPECT_TRUE(codes.insert(e.code).second) << "duplicate";
    EXPECT_EQ(std::string(e.code).rfind("cuda_", 0), 0u);
    EXPECT_EQ(std::string(e.name).rfind("CUDA_ERROR_", 0), 0u);
    EXPECT_FALSE(std::string(e.fix).empty());
    EXPECT_NE(doc.find(std::string("`") + e.code + "`"), std::string::npos) << "undocumented";
  }
  for (const char* code : {"cuda_library_not_found", "cuda_symbol_missing", "cuda_error"})
    EXPECT_NE(doc.find(std::string("`") + code + "`"), std::string::npos) << code;
}

TEST(CudaErrorTable, UnknownCodeUsesTheLibraryText) {
  Problem p = cuda_problem("cuDeviceGet(device 2)", 12345, "something odd");
  EXPECT_EQ(p.code, "cuda_error");
  EXPECT_EQ(p.message, "cuDeviceGet(device 2) failed: something odd (CUDA error = 12345)");
}

}  // namespace
}  // namespace gpuenv

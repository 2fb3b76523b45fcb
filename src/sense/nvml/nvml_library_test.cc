// The loader and the NVML ABI against the stand-in libraries: newest
// symbol first, absent optional symbols null, and the version word of
// nvmlMemory_v2 checked both statically and by the library.
#include "sys/dynamic_library.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "sense/nvml/nvml_api.h"
#include "sense/nvml/nvml_library.h"
#include "sense/nvml/nvml_test_support.h"

namespace gpuenv {
namespace {

struct InitFns {
  Fn<nvml::InitFn> init;
  Fn<nvml::DeviceGetNumaNodeIdFn> numa;
};

std::vector<Symbol> init_table(InitFns* f) {
  return {{{"nvmlInit_v2", "nvmlInit"}, &f->init, true},
          {{"nvmlDeviceGetNumaNodeId"}, &f->numa, false}};
}

TEST(NvidiaLoader, ResolvesTheNewestNameFirst) {
  DynamicLibrary lib;
  std::string err;
  ASSERT_TRUE(lib.open(testing::kFakeNvml, &err)) << err;
  InitFns f;
  ASSERT_TRUE(lib.resolve(init_table(&f), &err)) << err;
  EXPECT_STREQ(f.init.name, "nvmlInit_v2");
  EXPECT_NE(f.init.call, nullptr);
  EXPECT_STREQ(f.numa.name, "nvmlDeviceGetNumaNodeId");
}

TEST(NvidiaLoader, FallsBackToOlderNamesAndLeavesAbsentOnesNull) {
  DynamicLibrary lib;
  std::string err;
  ASSERT_TRUE(lib.open(testing::kOldNvml, &err)) << err;
  InitFns f;
  ASSERT_TRUE(lib.resolve(init_table(&f), &err)) << err;
  EXPECT_STREQ(f.init.name, "nvmlInit");
  EXPECT_EQ(f.numa.call, nullptr);
  EXPECT_EQ(f.numa.name, nullptr);
}

TEST(NvidiaLoader, MissingRequiredSymbolIsNamed) {
  DynamicLibrary lib;
  std::string err, missing;
  ASSERT_TRUE(lib.open(testing::kFakeCuda, &err)) << err;
  InitFns f;
  EXPECT_FALSE(lib.resolve(init_table(&f), &missing));
  EXPECT_EQ(missing, "nvmlInit_v2 or nvmlInit");
}

TEST(NvidiaLoader, OpenFailureKeepsDlerrorText) {
  DynamicLibrary lib;
  std::string err;
  EXPECT_FALSE(lib.open("libgpuenv-no-such-library.so.1", &err));
  EXPECT_EQ(err,
            "libgpuenv-no-such-library.so.1: cannot open shared object file: No such file "
            "or directory");
}

TEST(NvidiaLoader, FullTableLoadsFromBothStandIns) {
  for (const std::string& path : {testing::kFakeNvml, testing::kOldNvml}) {
    Nvml nvml;
    Problem p;
    EXPECT_TRUE(load_nvml(path, &nvml, &p)) << p.message;
  }
}

// The exporter's process functions: the newest names from a current
// driver, and absent (not a load failure) from an old one.
TEST(NvidiaLoader, ProcessFunctionsAreOptional) {
  Nvml now, old;
  Problem p;
  ASSERT_TRUE(load_nvml(testing::kFakeNvml, &now, &p)) << p.message;
  EXPECT_STREQ(now.fn.processes.name, "nvmlDeviceGetComputeRunningProcesses_v3");
  EXPECT_STREQ(now.fn.graphics_processes.name, "nvmlDeviceGetGraphicsRunningProcesses_v3");
  EXPECT_STREQ(now.fn.process_utilization.name, "nvmlDeviceGetProcessUtilization");
  ASSERT_TRUE(load_nvml(testing::kOldNvml, &old, &p)) << p.message;
  EXPECT_EQ(old.fn.processes.call, nullptr);
  EXPECT_EQ(old.fn.graphics_processes.call, nullptr);
  EXPECT_EQ(old.fn.process_utilization.call, nullptr);
}

// NVML_STRUCT_VERSION(Memory, 2) = sizeof(nvmlMemory_v2_t) | 2 << 24.
static_assert(nvml::kMemoryV2Version == (40u | (2u << 24)));

class NvidiaVersionWord : public testing::FakeNvidiaTest {
 protected:
  // Calls nvmlDeviceGetMemoryInfo_v2 on the h200 scenario's GPU 0 with
  // the given version word.
  nvml::Return memory_v2(unsigned version, nvml::MemoryV2* out) {
    setenv("FAKE_NVML_SCENARIO", testing::scenario("h200").c_str(), 1);
    Nvml nvml;
    Problem p;
    EXPECT_TRUE(load_nvml(testing::kFakeNvml, &nvml, &p)) << p.message;
    EXPECT_EQ(nvml.fn.init.call(), nvml::kSuccess);
    nvml::Device d = nullptr;
    EXPECT_EQ(nvml.fn.handle.call(0, &d), nvml::kSuccess);
    *out = {};
    out->version = version;
    nvml::Return rc = nvml.fn.memory_v2.call(d, out);
    nvml.fn.shutdown.call();
    return rc;
  }
};

TEST_F(NvidiaVersionWord, TheLibraryAcceptsOurs) {
  nvml::MemoryV2 m{};
  ASSERT_EQ(memory_v2(nvml::kMemoryV2Version, &m), nvml::kSuccess);
  EXPECT_EQ(m.total, 150754820096ull);
  EXPECT_EQ(m.reserved, 609222656ull);
  EXPECT_EQ(m.free, 150141403136ull);
  EXPECT_EQ(m.used, 150754820096ull - 609222656ull - 150141403136ull);
}

TEST_F(NvidiaVersionWord, TheLibraryRejectsWrongOnes) {
  nvml::MemoryV2 m{};
  for (unsigned wrong : {2u, 40u, 40u | (1u << 24), 24u | (2u << 24)}) {
    EXPECT_EQ(memory_v2(wrong, &m), nvml::kErrorArgumentVersionMismatch) << wrong;
    EXPECT_EQ(m.total, 0u);
  }
}

}  // namespace
}  // namespace gpuenv

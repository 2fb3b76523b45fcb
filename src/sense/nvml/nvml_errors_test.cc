// Every NVML failure code: its Problem as sense_nvidia reports it (through
// the stand-in's nvmlInit), and the table behind it, and its documentation.
#include "sense/nvml/nvml_errors.h"

#include <gtest/gtest.h>

#include <set>

#include "sense/nvml/nvml_test_support.h"
#include "test_paths.h"

namespace gpuenv {
namespace {

using testing::FakeRun;

using NvidiaInitErrors = testing::FakeNvidiaTest;

struct InitRow {
  int rc;
  const char* code;
  const char* message;  // after "nvmlInit_v2 failed: "
  const char* fix_hint;
};

const InitRow kInitRows[] = {
    {4, "nvml_no_permission",
     "no permission to use the NVIDIA device files (/dev/nvidiactl, /dev/nvidia*) "
     "(NVML_ERROR_NO_PERMISSION = 4)",
     "--gpus all"},
    {8, "nvml_insufficient_power",
     "a GPU's external power cables are not properly attached "
     "(NVML_ERROR_INSUFFICIENT_POWER = 8)",
     "auxiliary power connector"},
    {9, "nvml_driver_not_loaded",
     "the nvidia kernel module is not loaded (NVML_ERROR_DRIVER_NOT_LOADED = 9)",
     "sudo modprobe nvidia"},
    {11, "nvml_irq_issue",
     "the nvidia kernel module detected an interrupt problem with a GPU "
     "(NVML_ERROR_IRQ_ISSUE = 11)",
     "another slot"},
    {12, "nvml_dependency_not_found",
     "NVML could not find a library it depends on (NVML_ERROR_LIBRARY_NOT_FOUND = 12)",
     "reinstall the NVIDIA driver"},
    {15, "nvml_gpu_lost",
     "the GPU has fallen off the bus or is otherwise inaccessible (NVML_ERROR_GPU_IS_LOST = 15)",
     "Xid 79"},
    {16, "nvml_reset_required",
     "the GPU needs a reset before it can be used again (NVML_ERROR_RESET_REQUIRED = 16)",
     "nvidia-smi -r"},
    {17, "nvml_operating_system",
     "the operating system blocked the call (NVML_ERROR_OPERATING_SYSTEM = 17)", "SELinux"},
    {18, "nvml_version_mismatch",
     "Driver/library version mismatch: the driver was upgraded but the old kernel module is "
     "still loaded (NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18)",
     "reboot, or reload the nvidia kernel modules"},
    {999, "nvml_unknown", "NVML failed with an unknown internal error (NVML_ERROR_UNKNOWN = 999)",
     "rebooting"},
    // Not in the table: the library's own nvmlErrorString text is used.
    {42, "nvml_error", "Unknown Error (NVML error = 42)", "nvidia-smi"},
};

TEST_F(NvidiaInitErrors, EachCodeHasItsMessageAndFix) {
  for (const InitRow& row : kInitRows) {
    SCOPED_TRACE(row.rc);
    std::string path =
        write_scenario("fault init=" + std::to_string(row.rc) + "\n", std::to_string(row.rc));
    Machine m = sense(FakeRun().scenario(path));
    ASSERT_EQ(m.nvidia.problems.size(), 2u);  // and cuda_library_not_found
    const Problem& p = m.nvidia.problems[0];
    EXPECT_EQ(p.source, "nvml");
    EXPECT_EQ(p.code, row.code);
    EXPECT_EQ(p.message, std::string("nvmlInit_v2 failed: ") + row.message);
    EXPECT_NE(p.fix.find(row.fix_hint), std::string::npos) << p.fix;
    EXPECT_EQ(m.nvidia.problems[1].code, "cuda_library_not_found");
  }
}

TEST_F(NvidiaInitErrors, OldDriverNamesTheUnversionedCall) {
  Machine m = sense(FakeRun().nvml(testing::kOldNvml).scenario(write_scenario("fault init=9\n")));
  ASSERT_FALSE(m.nvidia.problems.empty());
  EXPECT_EQ(m.nvidia.problems[0].message,
            "nvmlInit failed: the nvidia kernel module is not loaded "
            "(NVML_ERROR_DRIVER_NOT_LOADED = 9)");
}

TEST(NvidiaErrorTable, CodesAreStableAndComplete) {
  std::set<std::string> codes;
  std::set<int> rcs;
  for (const NvmlError& e : nvml_errors()) {
    SCOPED_TRACE(e.code);
    EXPECT_TRUE(codes.insert(e.code).second) << "duplicate code";
    EXPECT_TRUE(rcs.insert(e.rc).second) << "duplicate return code";
    EXPECT_EQ(std::string(e.code).rfind("nvml_", 0), 0u);
    EXPECT_EQ(std::string(e.name).rfind("NVML_ERROR_", 0), 0u);
    EXPECT_FALSE(std::string(e.meaning).empty());
    EXPECT_FALSE(std::string(e.fix).empty());
  }
  for (int rc : {4, 8, 9, 11, 15, 16, 18, 999}) EXPECT_TRUE(rcs.count(rc)) << rc;
  for (const char* code : {"nvml_library_not_found", "nvml_symbol_missing", "nvml_error"})
    EXPECT_FALSE(codes.count(code)) << code << " is reserved for a non-return-code failure";
}

TEST(NvidiaErrorTable, ProblemWithoutLibraryText) {
  Problem p = nvml_problem("nvmlDeviceGetName(GPU 3)", 77, nullptr);
  EXPECT_EQ(p.code, "nvml_error");
  EXPECT_EQ(p.message,
            "nvmlDeviceGetName(GPU 3) failed: unrecognised NVML error (NVML error = 77)");
}

TEST(NvidiaErrorTable, AbsentAndFatalCodes) {
  for (int rc : {2, 3, 6, 13, 21}) EXPECT_TRUE(nvml_error_means_absent(rc)) << rc;
  for (int rc : {0, 1, 4, 9, 15, 18, 25, 999}) EXPECT_FALSE(nvml_error_means_absent(rc)) << rc;
  for (int rc : {15, 16, 28}) EXPECT_TRUE(nvml_error_is_fatal_for_gpu(rc)) << rc;
  for (int rc : {3, 4, 999}) EXPECT_FALSE(nvml_error_is_fatal_for_gpu(rc)) << rc;
}

TEST(NvidiaErrorTable, EveryCodeIsDocumented) {
  std::string doc;
  for (const std::string& line : testing::read_lines((test_paths::tests_dir() + "/../docs/nvml-errors.md")))
    doc += line + "\n";
  ASSERT_FALSE(doc.empty());
  for (const NvmlError& e : nvml_errors())
    EXPECT_NE(doc.find(std::string("`") + e.code + "`"), std::string::npos) << e.code;
  for (const char* code : {"nvml_library_not_found", "nvml_symbol_missing", "nvml_error"})
    EXPECT_NE(doc.find(std::string("`") + code + "`"), std::string::npos) << code;
}

}  // namespace
}  // namespace gpuenv

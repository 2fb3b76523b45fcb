// `gpuenv inspect`'s whole stdout and exit status, text and JSON, for every
// committed fixture (tests/fatbins/) on machines that cover each verdict,
// compared byte for byte with tests/golden/inspect.txt. stderr is left to
// inspect_test.cc (its wording belongs to the logger).
// GPUENV_UPDATE_GOLDEN=1 rewrites the file; review the diff before committing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "process.h"

namespace gpuenv {
namespace {

const std::string kTests = GPUENV_TESTS_DIR;
const std::string kGolden = kTests + "/golden/inspect.txt";

const char* const kFixtures[] = {"compressed.fatbin", "rdc_sm80.o",   "sm100f.fatbin",
                                 "sm75_sm86.o",       "sm80.cubin",   "sm80_sm90_ptx90.fatbin",
                                 "sm89_ptx89.so",     "sm90a.fatbin", "kernel.cu"};
const char* const kTextMachines[] = {
    "h200", "a100x8-nvlink", "b200x8",   "rtx5090", "rtx3090-rtx4090", "jetson-orin",
    "t4",   "gtx1080",       "a100-mig", "none"};
const char* const kJsonMachines[] = {"h200", "rtx3090-rtx4090", "jetson-orin", "none"};

// GPUENV_TESTS_DIR as "tests", so the file does not depend on the checkout.
std::string relative(std::string s) {
  for (std::size_t at; (at = s.find(kTests)) != std::string::npos;)
    s.replace(at, kTests.size(), "tests");
  return s;
}

std::string record(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"inspect"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = testing::run_gpuenv(argv);
  std::string cmd = "$ gpuenv";
  for (const auto& a : argv) cmd += " " + a;
  return relative(cmd + "\nexit " + std::to_string(r.exit_code) + "\n" + r.out + "\n");
}

std::vector<std::string> on(const std::string& machine, std::vector<std::string> args) {
  args.insert(args.end(), {"--machine", kTests + "/machines/" + machine + ".json"});
  return args;
}

std::string fixture(const std::string& name) { return kTests + "/fatbins/" + name; }

std::string all_runs() {
  std::string out;
  for (const char* m : kTextMachines)
    for (const char* f : kFixtures) out += record(on(m, {fixture(f)}));
  for (const char* m : kJsonMachines)
    for (const char* f : kFixtures) out += record(on(m, {"--json", fixture(f)}));
  std::vector<std::string> every = {"--json"};
  for (const char* f : kFixtures) every.push_back(fixture(f));
  out += record(on("rtx3090-rtx4090", every));
  every.erase(every.begin());
  out += record(on("b200x8", every));
  out += record(on("h200", {fixture("sm90a.fatbin"), "/nonexistent/libx.so"}));
  return out;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(InspectGolden, OutputIsUnchanged) {
  std::string now = all_runs();
  if (std::getenv("GPUENV_UPDATE_GOLDEN")) {
    std::ofstream(kGolden, std::ios::binary) << now;
    GTEST_SKIP() << "wrote " << kGolden;
  }
  std::ifstream in(kGolden, std::ios::binary);
  ASSERT_TRUE(in) << kGolden << " is missing: run with GPUENV_UPDATE_GOLDEN=1";
  std::stringstream want;
  want << in.rdbuf();
  // The first line that differs, and the command whose output it is in.
  std::vector<std::string> a = lines(want.str()), b = lines(now);
  std::string cmd;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    std::string la = i < a.size() ? a[i] : "<end>", lb = i < b.size() ? b[i] : "<end>";
    if (la.rfind("$ ", 0) == 0) cmd = la;
    ASSERT_EQ(la, lb) << kGolden << ":" << i + 1 << " after `" << cmd << "`";
  }
  EXPECT_EQ(want.str(), now);
}

}  // namespace
}  // namespace gpuenv

// `gpuenv inspect`'s counts (cubins per sm_XY, PTX per compute_XY) for each
// fixture against oracles that are not gpuenv: the nvcc flags each fixture
// was built with (tests/fatbins/make.sh), and cuobjdump --list-elf
// --list-ptx where it is installed (on the committed fixtures and on those
// this build's nvcc made). tests/golden/inspect.txt holds the same counts,
// so a golden rewritten from a wrong parser fails here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "process.h"
#include "test_paths.h"

namespace gpuenv::testing {
namespace {

using Counts = std::map<std::string, int>;  // sm_90 -> cubins, compute_90 -> PTX
const std::string kFatbins = (test_paths::tests_dir() + "/fatbins/");

// What make.sh's -gencode flags put in each fixture: one cubin per code=sm_XY
// and one PTX per code=compute_XY (kernel.cu is one translation unit).
// `more`: the file may hold other fatbins too (a shared library links the
// static CUDA runtime's), so these are the least it holds.
struct Recipe {
  const char* file;
  Counts counts;
  bool more = false;
};
const Recipe kRecipes[] = {
    {"sm80_sm90_ptx90.fatbin", {{"sm_80", 1}, {"sm_90", 1}, {"compute_90", 1}}},
    {"compressed.fatbin", {{"sm_80", 1}, {"sm_90", 1}, {"compute_90", 1}}},
    {"sm90a.fatbin", {{"sm_90a", 1}, {"compute_90a", 1}}},
    {"sm100f.fatbin", {{"sm_100f", 1}, {"compute_100f", 1}}},
    {"sm75_sm86.o", {{"sm_75", 1}, {"sm_86", 1}}},
    {"rdc_sm80.o", {{"sm_80", 1}, {"compute_80", 1}}},
    {"sm89_ptx89.so", {{"sm_89", 1}, {"compute_89", 1}}, true},
};

// inspect --json's counts for one file; *err says why there are none.
bool inspect_counts(const std::string& path, Counts* out, std::string* err) {
  ProcessResult r = run_gpuenv({"inspect", "--json", "--machine", (test_paths::tests_dir() + "/machines/none.json"), path});
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (!j.is_object() || !j["files"].is_array() || j["files"].empty() || j["files"][0].contains("error")) {
    *err = "inspect " + path + ": exit " + std::to_string(r.exit_code) + "\n" + r.out + r.err;
    return false;
  }
  for (const char* kind : {"cubins", "ptx"})
    for (const auto& [arch, entry] : j["files"][0][kind].items()) (*out)[arch] += entry["count"].get<int>();
  return true;
}

std::string show(const Counts& c) {
  std::string s;
  for (const auto& [arch, n] : c) s += arch + ": " + std::to_string(n) + ", ";
  return s.empty() ? "none" : s.substr(0, s.size() - 2);
}

// The committed fixtures, and those this build's nvcc made from the same
// recipe (one it could not build is left out; make.sh says so).
std::vector<std::string> fixture_dirs() {
#ifdef GPUENV_HAS_NVCC_FATBINS
  return {kFatbins, test_paths::nvcc_fatbins() + "/"};
#else
  return {kFatbins};
#endif
}

TEST(InspectOracle, CountsAreWhatEachFixtureWasBuiltWith) {
  for (const std::string& dir : fixture_dirs())
    for (const Recipe& r : kRecipes) {
      std::string path = dir + r.file;
      if (dir != kFatbins && !std::filesystem::exists(path)) continue;
      Counts got;
      std::string err;
      ASSERT_TRUE(inspect_counts(path, &got, &err)) << err;
      if (!r.more) {
        EXPECT_EQ(got, r.counts) << path << ": inspect " << show(got) << ", make.sh " << show(r.counts);
        continue;
      }
      for (const auto& [arch, n] : got) EXPECT_TRUE(r.counts.count(arch)) << path << ": " << arch << " not built";
      for (const auto& [arch, n] : r.counts) EXPECT_GE(got[arch], n) << path << ": " << arch;
    }
}

// The cuobjdump to ask: $CUOBJDUMP, on PATH, or the CUDA toolkit's; "" if none.
std::string cuobjdump() {
  if (const char* c = std::getenv("CUOBJDUMP"); c && *c) return c;
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && access((dir + "/cuobjdump").c_str(), X_OK) == 0) return dir + "/cuobjdump";
  return access("/usr/local/cuda/bin/cuobjdump", X_OK) == 0 ? "/usr/local/cuda/bin/cuobjdump" : "";
}

// cuobjdump's listing as counts, as tests/gpu/inspect_vs_cuobjdump.sh reads
// it: "ELF file 1: x.1.sm_90.cubin" is a cubin for sm_90, "PTX file 1:
// x.1.sm_90.ptx" PTX for compute_90.
Counts cuobjdump_counts(const std::string& tool, const std::string& path) {
  static const std::regex kLine(R"(^(ELF|PTX) file\s+\d+: .*\.(sm_\d+[af]?)\.(cubin|ptx)$)");
  ProcessResult r = run_process({tool, "--list-elf", "--list-ptx", path});
  Counts c;
  std::istringstream lines(r.out);
  std::smatch m;
  for (std::string line; std::getline(lines, line);) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (std::regex_match(line, m, kLine))
      ++c[m[1] == "ELF" ? m[2].str() : "compute_" + m[2].str().substr(3)];
  }
  return c;
}

// cuobjdump 13.0 lists a family-specific cubin (nvcc -arch=sm_100f) under
// its base name (docs/performance.md): inspect's are folded the same way.
Counts fold_family(const Counts& c) {
  Counts out;
  for (const auto& [arch, n] : c)
    out[arch.rfind("sm_", 0) == 0 && arch.back() == 'f' ? arch.substr(0, arch.size() - 1) : arch] += n;
  return out;
}

std::vector<std::string> fixtures() {
  std::vector<std::string> out;
  for (const std::string& dir : fixture_dirs())
    for (const Recipe& r : kRecipes)
      if (std::filesystem::exists(dir + r.file)) out.push_back(dir + r.file);
  return out;
}

// Not installed by the README's `make deps` (it comes with NVIDIA's CUDA
// toolkit, not Debian), so its absence is a skip that names it.
TEST(InspectOracle, CountsAreCuobjdumps) {
  std::string tool = cuobjdump();
  if (tool.empty()) GTEST_SKIP() << "no cuobjdump ($CUOBJDUMP, PATH, /usr/local/cuda/bin): the counts were checked "
                                    "against the fixtures' build recipe only";
  for (const std::string& path : fixtures()) {
    Counts ours, theirs = cuobjdump_counts(tool, path);
    std::string err;
    ASSERT_TRUE(inspect_counts(path, &ours, &err)) << err;
    EXPECT_FALSE(theirs.empty()) << path << ": cuobjdump listed nothing";
    EXPECT_EQ(fold_family(ours), theirs) << path << ": inspect " << show(ours) << ", cuobjdump " << show(theirs);
  }
}

}  // namespace
}  // namespace gpuenv::testing

#include "decide/wheels.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "decide/arch.h"
#include "test_paths.h"

namespace gpuenv {
namespace {

// One row of the README's "Which base tag" table, parsed.
struct WheelRow {
  std::string torch, variant, cuda, min_driver;
  std::set<std::string> sass;  // "7.5"
  std::string ptx;             // "12.0", or "" for none
  friend bool operator==(const WheelRow&, const WheelRow&) = default;
};

std::ostream& operator<<(std::ostream& os, const WheelRow& r) {
  os << r.torch << "+" << r.variant << " CUDA " << r.cuda << " driver " << r.min_driver << " sass";
  for (const auto& s : r.sass) os << " " << s;
  return os << " ptx " << (r.ptx.empty() ? "-" : r.ptx);
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line.substr(1));
  std::string cell;
  while (std::getline(ss, cell, '|')) out.push_back(cell);
  return out;
}

// | `2.9.1-cuda12.8-cudnn9-runtime` (default) | 12.8.1 | Volta 7.0, ... (+PTX). No ... | ≥ 525.60.13; ... |
std::optional<WheelRow> parse_row(const std::string& line) {
  static const std::regex tag(R"(`(\d+\.\d+\.\d+)-cuda(\d+)\.(\d+)-)");
  std::smatch t;
  if (line.rfind("| `", 0) != 0 || !std::regex_search(line, t, tag)) return std::nullopt;
  std::vector<std::string> c = cells(line);
  if (c.size() < 4) return std::nullopt;
  WheelRow r{t[1].str(), "cu" + t[2].str() + t[3].str(), std::regex_replace(c[1], std::regex(" "), ""), "", {}, ""};
  std::string gpus = c[2].substr(0, c[2].find(". No"));
  static const std::regex cc(R"((\d+\.\d+)( \(\+PTX\))?)");
  for (auto it = std::sregex_iterator(gpus.begin(), gpus.end(), cc); it != std::sregex_iterator(); ++it) {
    r.sass.insert((*it)[1].str());
    if ((*it)[2].matched) r.ptx = (*it)[1].str();
  }
  std::smatch d;
  if (std::regex_search(c[3], d, std::regex(R"(≥ ([0-9.]+))"))) r.min_driver = d[1].str();
  return r;
}

std::vector<WheelRow> readme_rows() {
  std::ifstream in(test_paths::tests_dir() + "/../README.md");
  std::string line;
  bool in_section = false;
  std::vector<WheelRow> out;
  while (std::getline(in, line)) {
    if (line.find("**Which base tag.**") != std::string::npos) in_section = true;
    if (!in_section) continue;
    if (auto r = parse_row(line)) out.push_back(*r);
    else if (!out.empty() && line.rfind("|", 0) != 0) break;
  }
  return out;
}

WheelRow row_of(const TorchBuild& b) {
  WheelRow r{b.torch, b.variant, b.cuda, b.min_driver, {}, b.ptx ? cc_string(*b.ptx) : ""};
  for (auto cc : b.sass) r.sass.insert(cc_string(cc));
  return r;
}

// One source for both: the README's table and image_builds() hold the
// same rows, value for value, in both directions.
TEST(WheelsTest, ReadmeTableIsTheImageBuilds) {
  std::vector<WheelRow> readme = readme_rows(), code;
  for (const TorchBuild* b : image_builds()) code.push_back(row_of(*b));
  ASSERT_FALSE(readme.empty()) << "no \"Which base tag\" table in README.md";
  EXPECT_EQ(readme, code);
}

// The parser reads what the README says, not what the code holds.
TEST(WheelsTest, ReadmeRowParser) {
  auto r = parse_row("| `2.9.1-cuda13.0-cudnn9-runtime` | 13.0.0 | Turing 7.5, Ampere 8.0/8.6, "
                     "Blackwell 10.0/12.0 (+PTX). No Volta 7.0 | ≥ 580.65.06; x 570 |");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (WheelRow{"2.9.1", "cu130", "13.0.0", "580.65.06", {"7.5", "8.0", "8.6", "10.0", "12.0"},
                     "12.0"}));
  EXPECT_FALSE(parse_row("| tag | CUDA | GPUs | driver |"));
}

const TorchBuild& build(const std::string& release, const std::string& variant) {
  for (const TorchBuild* b : builds_of(release))
    if (variant == b->variant) return *b;
  throw std::runtime_error("no " + release + " " + variant);
}

std::string variants(const std::string& release) {
  std::string out;
  for (const TorchBuild* b : builds_of(release)) out += (out.empty() ? "" : " ") + std::string(b->variant);
  return out;
}

// The rows of PyTorch's CUDA Support Matrix per release (docs/wheels.md).
TEST(WheelsTest, ReleaseMatrix) {
  EXPECT_EQ(variants("2.9"), "cu126 cu128 cu130");
  EXPECT_EQ(variants("2.10"), "cu126 cu128 cu130");
  EXPECT_EQ(variants("2.11"), "cu126 cu128 cu130");
  EXPECT_EQ(variants("2.12"), "cu126 cu130 cu132");
  EXPECT_EQ(variants("2.13"), "cu126 cu130 cu132");
  EXPECT_EQ(variants("2.14"), "cu126 cu130 cu132");
  EXPECT_EQ(variants("2.15"), "");  // past the table: docs/wheels.md says why
  EXPECT_EQ(variants("2.1"), "");   // "2.1" is not a prefix of "2.12"
  ComputeCapability volta{7, 0}, pascal{6, 0}, blackwell{12, 0};
  EXPECT_TRUE(carries_all(build("2.10", "cu128"), {volta}));
  EXPECT_FALSE(carries_all(build("2.11", "cu128"), {volta}));  // 2.11 dropped Volta from cu128
  for (const std::string r : {"2.9", "2.10", "2.11", "2.12", "2.13", "2.14"}) {
    SCOPED_TRACE(r);
    EXPECT_TRUE(carries_all(build(r, "cu126"), {volta, pascal}));  // cu12x still has sm_70
    EXPECT_FALSE(carries_all(build(r, "cu126"), {blackwell}));
    EXPECT_FALSE(carries_all(build(r, "cu130"), {volta}));  // CUDA 13 dropped Volta and Pascal
    EXPECT_FALSE(carries_all(build(r, "cu130"), {pascal}));
    EXPECT_EQ(std::string(build(r, "cu130").min_driver), "580.65.06");
    EXPECT_EQ(std::string(build(r, "cu126").min_driver), "525.60.13");
  }
  for (const std::string r : {"2.12", "2.13", "2.14"}) {
    SCOPED_TRACE(r);
    EXPECT_FALSE(carries_all(build(r, "cu132"), {volta}));
    EXPECT_EQ(std::string(build(r, "cu132").cuda), "13.2.1");
    EXPECT_EQ(std::string(build(r, "cu130").cuda), "13.0.2");
  }
  EXPECT_EQ(std::string(recommended_builds().back()->torch), "2.14.0");
  EXPECT_EQ(std::string(wheel_table_end().release), release_of(recommended_builds().back()->torch));
  EXPECT_EQ(std::string(wheel_table_end().date), "2026-09-18");
}

TEST(WheelsTest, ReleaseOf) {
  EXPECT_EQ(release_of("2.12.0+cu130"), "2.12");
  EXPECT_EQ(release_of("2.9.1"), "2.9");
  EXPECT_EQ(release_of("2.10.0a0+git1234"), "2.10");
  EXPECT_EQ(release_of("torch"), "");
  EXPECT_EQ(release_of("2."), "");
  EXPECT_EQ(release_of(".1.2"), "");
}

Nvidia driver(const char* version, int cuda) {
  Nvidia n;
  n.driver_version = version;
  n.cuda_driver_version = cuda;
  return n;
}

Nvidia driver_only(const char* version) {
  Nvidia n;
  n.driver_version = version;
  return n;
}

// "2.14.0 cu130", "+minor", "+driver 580.65.06", "+past", "+keep": a choice
// in one line.
std::string describe(const WheelChoice& c) {
  std::string out = c.build ? c.version + " " + c.build->variant : c.version;
  if (c.minor_compat) out += " +minor";
  if (c.driver_first) out += " +driver " + *c.driver_first;
  if (c.past_table) out += " +past";
  if (c.not_reinstallable) out += " +keep";
  return out;
}

// {GPUs, driver, the installed torch} -> the one choice labels and doctor use.
TEST(WheelsTest, ChooseWheel) {
  struct Case {
    const char* what;
    std::vector<ComputeCapability> gpus;
    Nvidia driver;
    std::string installed;
    std::string want;
  };
  const Case cases[] = {
      {"H200, driver 580.159.04 reports CUDA 13.0: cu130, not cu132 (the driver's CUDA is the ceiling)",
       {{9, 0}}, driver("580.159.04", 13000), "", "2.14.0 cu130"},
      {"V100, 2.14.0+cu130 installed: 2.14.0's own cu126, never 2.12.1", {{7, 0}},
       driver("580.95.05", 13000), "2.14.0+cu130", "2.14.0 cu126"},
      {"H100, driver 595 reports CUDA 13.2: cu132", {{9, 0}}, driver("595.45.04", 13020), "",
       "2.14.0 cu132"},
      {"H100, driver 550, torch 2.12: its own patch, cu126 by minor-version compatibility", {{9, 0}},
       driver("550.54.14", 12040), "2.12.0+cu130", "2.12.0 cu126 +minor"},
      {"H100, driver 580, torch 2.12: its own cu130", {{9, 0}}, driver("580.95.05", 13000),
       "2.12.0+cu130", "2.12.0 cu130"},
      {"V100, driver 550, torch 2.10: the line least beyond 12.4", {{7, 0}}, driver("550.54.14", 12040),
       "2.10.0+cu128", "2.10.0 cu126 +minor"},
      {"B200, driver 570, torch 2.11 (CPU): its cu128", {{10, 0}}, driver("570.124.06", 12080),
       "2.11.0+cpu", "2.11.0 cu128"},
      {"B200, driver 550, torch 2.12: the GA driver of cu130 first", {{10, 0}}, driver("550.54.14", 12040),
       "2.12.0+cu130", "2.12.0 cu130 +driver 580.65.06"},
      {"H100, driver 470: the GA driver of cu126 first", {{9, 0}}, driver("470.256.02", 11040), "",
       "2.14.0 cu126 +driver 560.28.03"},
      {"torch 2.5 (before the table): the newest's", {{9, 0}}, driver("580.95.05", 13000), "2.5.1+cu124",
       "2.14.0 cu130"},
      {"future 2.99.0+cu140: its own version, never a downgrade", {{9, 0}}, driver("580.95.05", 13000),
       "2.99.0+cu140", "2.99.0 cu130 +past"},
      {"future 2.99.0 on Kepler: nothing, still no downgrade", {{3, 7}}, driver("580.95.05", 13000),
       "2.99.0+cu140", "2.99.0 +past"},
      {"NGC's build: never a reinstall", {{8, 0}}, driver("580.159.04", 13000), "2.10.0a0+3e8e2a4.nv25.12",
       " +keep"},
      {"a nightly: never a reinstall", {{9, 0}}, driver("580.95.05", 13000), "2.15.0.dev20261001+cu130",
       " +keep"},
      {"a source build: never a reinstall", {{9, 0}}, driver("580.95.05", 13000), "2.14.0a0+gitabc1234",
       " +keep"},
      {"nothing known of the driver: the newest CUDA", {{9, 0}}, Nvidia{}, "", "2.14.0 cu132"},
      {"driver version only, 580.159.04: CUDA 13.0 by the GA drivers", {{9, 0}}, driver_only("580.159.04"),
       "", "2.14.0 cu130"},
      {"driver version only, 595.45.04: CUDA 13.2's GA driver", {{9, 0}}, driver_only("595.45.04"), "",
       "2.14.0 cu132"},
      {"Kepler: nothing", {{3, 7}}, driver("470.256.02", 11040), "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(describe(choose_wheel(c.gpus, c.driver, c.installed)), c.want);
  }
}

TEST(WheelsTest, DriverCuda) {
  EXPECT_EQ(driver_cuda(Nvidia{}), std::nullopt);
  EXPECT_EQ(driver_cuda(driver("580.159.04", 13000)), 13000);  // the reported CUDA wins
  EXPECT_EQ(driver_cuda(driver_only("580.159.04")), 13000);
  EXPECT_EQ(driver_cuda(driver_only("590.44.01")), 13010);
  EXPECT_EQ(driver_cuda(driver_only("595.45.04")), 13020);
  EXPECT_EQ(driver_cuda(driver_only("570.124.06")), 12080);
  EXPECT_EQ(driver_cuda(driver_only("400.1")), std::nullopt);
}

// Field by field as numbers: the branch, then the rest (issue 39: a
// 580.159.04 driver was told to upgrade to 580.65.06).
TEST(WheelsTest, CompareDriverVersionsNumericallyByBranch) {
  struct Case {
    const char *a, *b;
    int want;
  } cases[] = {
      {"580.65.06", "580.159.04", -1}, {"580.159.04", "580.65.06", 1}, {"595.45.04", "580.159.04", 1},
      {"580.65.06", "580.65.06", 0},   {"570.124", "570.124.06", -1},  {"1000.1", "999.99.99", 1},
      {"525.60.13", "525.60.9", 1},
  };
  for (const Case& c : cases) EXPECT_EQ(compare_driver_versions(c.a, c.b), c.want) << c.a << " " << c.b;
}

TEST(WheelsTest, PipInstallReplacesTheInstalledTorch) {
  EXPECT_EQ(pip_install(build("2.9", "cu128")),
            "pip install --force-reinstall torch==2.9.1 --index-url "
            "https://download.pytorch.org/whl/cu128");
  EXPECT_EQ(pip_install(build("2.12", "cu126"), "2.12.0"),
            "pip install --force-reinstall torch==2.12.0 --index-url "
            "https://download.pytorch.org/whl/cu126");
}

// The GA driver of each CUDA 13 release (docs/wheels.md): what a driver
// upgrade names.
TEST(WheelsTest, ToolkitDrivers) {
  EXPECT_EQ(std::string(toolkit_driver(13000)->full), "580.65.06");
  EXPECT_EQ(std::string(toolkit_driver(13010)->full), "590.44.01");
  EXPECT_EQ(std::string(toolkit_driver(13020)->full), "595.45.04");
  EXPECT_EQ(std::string(toolkit_driver(13020)->minor_compat), "580.65.06");
  EXPECT_EQ(toolkit_driver(14000), nullptr);
}

}  // namespace
}  // namespace gpuenv

#include "decide/wheels.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "decide/arch.h"

namespace gpuenv {
namespace {

// One row of the README's "Which base tag" table, parsed.
struct Row {
  std::string torch, variant, cuda, min_driver;
  std::set<std::string> sass;  // "7.5"
  std::string ptx;             // "12.0", or "" for none
  friend bool operator==(const Row&, const Row&) = default;
};

std::ostream& operator<<(std::ostream& os, const Row& r) {
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
std::optional<Row> parse_row(const std::string& line) {
  static const std::regex tag(R"(`(\d+\.\d+\.\d+)-cuda(\d+)\.(\d+)-)");
  std::smatch t;
  if (line.rfind("| `", 0) != 0 || !std::regex_search(line, t, tag)) return std::nullopt;
  std::vector<std::string> c = cells(line);
  if (c.size() < 4) return std::nullopt;
  Row r{t[1].str(), "cu" + t[2].str() + t[3].str(), std::regex_replace(c[1], std::regex(" "), ""), "", {}, ""};
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

std::vector<Row> readme_rows() {
  std::ifstream in(std::string(GPUENV_TESTS_DIR) + "/../README.md");
  std::string line;
  bool in_section = false;
  std::vector<Row> out;
  while (std::getline(in, line)) {
    if (line.find("**Which base tag.**") != std::string::npos) in_section = true;
    if (!in_section) continue;
    if (auto r = parse_row(line)) out.push_back(*r);
    else if (!out.empty() && line.rfind("|", 0) != 0) break;
  }
  return out;
}

Row row_of(const TorchBuild& b) {
  Row r{b.torch, b.variant, b.cuda, b.min_driver, {}, b.ptx ? cc_string(*b.ptx) : ""};
  for (auto cc : b.sass) r.sass.insert(cc_string(cc));
  return r;
}

// One source for both: the README's table and image_builds() hold the
// same rows, value for value, in both directions.
TEST(WheelsTest, ReadmeTableIsTheImageBuilds) {
  std::vector<Row> readme = readme_rows(), code;
  for (const TorchBuild* b : image_builds()) code.push_back(row_of(*b));
  ASSERT_FALSE(readme.empty()) << "no \"Which base tag\" table in README.md";
  EXPECT_EQ(readme, code);
}

// The parser reads what the README says, not what the code holds.
TEST(WheelsTest, ReadmeRowParser) {
  auto r = parse_row("| `2.9.1-cuda13.0-cudnn9-runtime` | 13.0.0 | Turing 7.5, Ampere 8.0/8.6, "
                     "Blackwell 10.0/12.0 (+PTX). No Volta 7.0 | ≥ 580.65.06; x 570 |");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (Row{"2.9.1", "cu130", "13.0.0", "580.65.06", {"7.5", "8.0", "8.6", "10.0", "12.0"},
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
  EXPECT_EQ(variants("2.13"), "");  // not in the matrix: docs/wheels.md says why
  EXPECT_EQ(variants("2.1"), "");   // "2.1" is not a prefix of "2.12"
  ComputeCapability volta{7, 0}, pascal{6, 0}, blackwell{12, 0};
  EXPECT_TRUE(carries_all(build("2.10", "cu128"), {volta}));
  EXPECT_FALSE(carries_all(build("2.11", "cu128"), {volta}));  // 2.11 dropped Volta from cu128
  for (const std::string r : {"2.9", "2.10", "2.11", "2.12"}) {
    SCOPED_TRACE(r);
    EXPECT_TRUE(carries_all(build(r, "cu126"), {volta, pascal}));  // cu12x still has sm_70
    EXPECT_FALSE(carries_all(build(r, "cu126"), {blackwell}));
    EXPECT_FALSE(carries_all(build(r, "cu130"), {volta}));  // CUDA 13 dropped Volta and Pascal
    EXPECT_FALSE(carries_all(build(r, "cu130"), {pascal}));
    EXPECT_EQ(std::string(build(r, "cu130").min_driver), "580.65.06");
    EXPECT_EQ(std::string(build(r, "cu126").min_driver), "525.60.13");
  }
  EXPECT_FALSE(carries_all(build("2.12", "cu132"), {volta}));
  EXPECT_EQ(std::string(build("2.12", "cu132").cuda), "13.2.1");
  EXPECT_EQ(std::string(recommended_builds().back()->torch), "2.12.1");
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

// {GPUs, driver, the user's release} -> the build a fix installs.
TEST(WheelsTest, NewestBuildPrefersTheUsersRelease) {
  struct Case {
    const char* what;
    std::vector<ComputeCapability> gpus;
    Nvidia driver;
    std::string release;
    std::string want;  // "2.12.1 cu126", or "" for none
  };
  const Case cases[] = {
      {"H100, driver 550, torch 2.12: its own cu126, no downgrade", {{9, 0}}, driver("550.54.14", 12040),
       "2.12", "2.12.1 cu126"},
      {"H100, driver 580, torch 2.12: the newest CUDA", {{9, 0}}, driver("580.95.05", 13000), "2.12",
       "2.12.1 cu132"},
      {"V100, driver 580, torch 2.12: cu126 (cu13x has no sm_70)", {{7, 0}}, driver("580.95.05", 13000),
       "2.12", "2.12.1 cu126"},
      {"V100, driver 550, torch 2.10: cu128 still has sm_70 there", {{7, 0}}, driver("550.54.14", 12040),
       "2.10", "2.10.0 cu128"},
      {"V100, driver 550, torch 2.11: cu128 dropped it", {{7, 0}}, driver("550.54.14", 12040), "2.11",
       "2.11.0 cu126"},
      {"B200, driver 550, torch 2.12: nothing of 2.12 fits, nor of the newest", {{10, 0}},
       driver("550.54.14", 12040), "2.12", ""},
      {"B200, driver 570, torch 2.11: its cu128", {{10, 0}}, driver("570.124.06", 12080), "2.11",
       "2.11.0 cu128"},
      {"unknown release: the newest's", {{9, 0}}, driver("550.54.14", 12040), "2.13", "2.12.1 cu126"},
      {"no release: the newest's", {{8, 0}}, driver("580.95.05", 13000), "", "2.12.1 cu132"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const TorchBuild* b = newest_build(c.gpus, &c.driver, c.release);
    EXPECT_EQ(b ? std::string(b->torch) + " " + b->variant : "", c.want);
  }
  const TorchBuild* up = least_driver_build({{10, 0}}, "2.12");
  ASSERT_TRUE(up);
  EXPECT_EQ(std::string(up->variant), "cu132");  // 580 either way: the newest of the least
  EXPECT_EQ(least_driver_build({{3, 7}}, "2.12"), nullptr);
}

TEST(WheelsTest, PipInstallReplacesTheInstalledTorch) {
  EXPECT_EQ(pip_install(build("2.9", "cu128")),
            "pip install --force-reinstall torch==2.9.1 --index-url "
            "https://download.pytorch.org/whl/cu128");
  EXPECT_EQ(pip_install(build("2.12", "cu126"), "2.12.0"),
            "pip install --force-reinstall torch==2.12.0 --index-url "
            "https://download.pytorch.org/whl/cu126");
}

TEST(WheelsTest, DriverRuns) {
  const TorchBuild& cu128 = build("2.9", "cu128");
  const TorchBuild& cu130 = build("2.9", "cu130");
  Nvidia n;
  EXPECT_TRUE(driver_runs(n, cu130));  // nothing known
  n.cuda_driver_version = 12020;
  EXPECT_TRUE(driver_runs(n, cu128));
  EXPECT_FALSE(driver_runs(n, cu130));
  n.driver_version = "525.60.12";  // the version wins over the CUDA it reports
  EXPECT_FALSE(driver_runs(n, cu128));
  n.driver_version = "580.65.06";
  EXPECT_TRUE(driver_runs(n, cu130));
}

TEST(WheelsTest, ToolkitDriverOf132HasNoFullDriverYet) {
  const ToolkitDriver* td = toolkit_driver(13020);
  ASSERT_TRUE(td);
  EXPECT_EQ(td->full, nullptr);  // docs/wheels.md: not found in the sources gpuenv cites
  EXPECT_EQ(std::string(td->minor_compat), "580.65.06");
  EXPECT_EQ(std::string(toolkit_driver(13000)->full), "580.65.06");
}

}  // namespace
}  // namespace gpuenv

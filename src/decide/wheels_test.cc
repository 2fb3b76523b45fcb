#include "decide/wheels.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

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

// One source for both: the README's table and recommended_builds() hold the
// same rows, value for value, in both directions.
TEST(WheelsTest, ReadmeTableIsTheRecommendedBuilds) {
  std::vector<Row> readme = readme_rows(), code;
  for (const auto& b : recommended_builds()) code.push_back(row_of(b));
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

TEST(WheelsTest, PipInstallReplacesTheInstalledTorch) {
  EXPECT_EQ(pip_install(recommended_builds().at(1)),
            "pip install --force-reinstall torch==2.9.1 --index-url "
            "https://download.pytorch.org/whl/cu128");
}

TEST(WheelsTest, DriverRuns) {
  const TorchBuild& cu128 = recommended_builds().at(1);
  const TorchBuild& cu130 = recommended_builds().at(2);
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

}  // namespace
}  // namespace gpuenv

#include "decide/wheels.h"

#include "decide/kernel_compat.h"
#include "decide/torch_version.h"

namespace gpuenv {

const std::vector<WheelArchs>& wheel_table() {
  static const std::vector<ComputeCapability> kCu118 = {{3, 7}, {5, 0}, {6, 0}, {7, 0},
                                                        {7, 5}, {8, 0}, {8, 6}, {9, 0}};
  static const std::vector<ComputeCapability> kCu12 = {{5, 0}, {6, 0}, {7, 0}, {7, 5},
                                                       {8, 0}, {8, 6}, {9, 0}};
  static const std::vector<ComputeCapability> kCu128 = {{7, 5}, {8, 0},  {8, 6},
                                                        {9, 0}, {10, 0}, {12, 0}};
  // 11.0 is in the aarch64 cu130 wheel, the only one a Thor can install.
  static const std::vector<ComputeCapability> kCu130 = {{7, 5},  {8, 0},  {8, 6}, {9, 0},
                                                        {10, 0}, {11, 0}, {12, 0}};
  static const std::vector<WheelArchs> kTable = {
      {"cu118", 11080, kCu118, {}, std::nullopt},
      {"cu121", 12010, kCu12, {}, std::nullopt},
      {"cu124", 12040, kCu12, {}, ComputeCapability{9, 0}},
      {"cu126", 12060, kCu12, {}, std::nullopt},
      {"cu128", 12080, kCu128, {{7, 0}}, ComputeCapability{12, 0}},
      {"cu129", 12090, kCu128, {{7, 0}}, ComputeCapability{12, 0}},
      {"cu130", 13000, kCu130, {}, ComputeCapability{12, 0}},
      {"cu132", 13020, kCu130, {}, ComputeCapability{12, 0}},
  };
  return kTable;
}

const WheelArchs* wheel_for(const std::string& variant) {
  for (const auto& row : wheel_table())
    if (variant == row.variant) return &row;
  return nullptr;
}

std::string variant_of(const std::string& cuda) {
  std::string digits;
  for (char c : cuda.substr(0, cuda.find('.', cuda.find('.') + 1)))
    if (c != '.') digits += c;
  return "cu" + digits;
}

std::optional<int> cuda_number(const std::string& v) {
  auto dot = v.find('.');
  if (dot == std::string::npos || dot == 0 || dot > 3) return std::nullopt;
  int major = 0, minor = 0;
  size_t i = 0;
  for (; i < dot; ++i) {
    if (v[i] < '0' || v[i] > '9') return std::nullopt;
    major = major * 10 + (v[i] - '0');
  }
  size_t j = dot + 1;
  if (j >= v.size() || v[j] < '0' || v[j] > '9') return std::nullopt;
  for (; j < v.size() && j < dot + 3 && v[j] >= '0' && v[j] <= '9'; ++j)
    minor = minor * 10 + (v[j] - '0');
  return major * 1000 + minor * 10;
}

std::string cuda_string(int cuda) {
  return std::to_string(cuda / 1000) + "." + std::to_string(cuda % 1000 / 10);
}

namespace {

// CUDA Toolkit release notes, "CUDA Toolkit and Corresponding Driver
// Versions" (Linux, GA), and the CUDA Compatibility guide's minor-version
// table: 11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580 (docs/wheels.md).
const std::vector<ToolkitDriver>& toolkit_drivers() {
  static const std::vector<ToolkitDriver> kTable = {
      {11000, "450.51.06", "450.80.02"}, {11080, "520.61.05", "450.80.02"},
      {12000, "525.60.13", "525.60.13"}, {12010, "530.30.02", "525.60.13"},
      {12020, "535.54.03", "525.60.13"}, {12030, "545.23.06", "525.60.13"},
      {12040, "550.54.14", "525.60.13"}, {12050, "555.42.02", "525.60.13"},
      {12060, "560.28.03", "525.60.13"}, {12080, "570.26", "525.60.13"},
      {12090, "575.51.03", "525.60.13"}, {13000, "580.65.06", "580.65.06"},
      {13010, "590.44.01", "580.65.06"}, {13020, "595.45.04", "580.65.06"},
  };
  return kTable;
}

}  // namespace

const ToolkitDriver* toolkit_driver(int cuda) {
  const ToolkitDriver* best = nullptr;
  for (const auto& row : toolkit_drivers())
    if (row.cuda <= cuda && row.cuda / 1000 == cuda / 1000) best = &row;
  return best;
}

int compare_driver_versions(const std::string& a, const std::string& b) {
  auto parts = [](const std::string& s) {
    std::vector<long> out;
    long cur = 0;
    for (char c : s) {
      if (c == '.') {
        out.push_back(cur);
        cur = 0;
      } else if (c >= '0' && c <= '9' && cur < 100000000) {
        cur = cur * 10 + (c - '0');
      }
    }
    out.push_back(cur);
    return out;
  };
  auto x = parts(a), y = parts(b);
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    long p = i < x.size() ? x[i] : 0, q = i < y.size() ? y[i] : 0;
    if (p != q) return p < q ? -1 : 1;
  }
  return 0;
}

bool any_cubin_runs(const std::vector<ComputeCapability>& sass, ComputeCapability gpu) {
  for (auto s : sass)
    if (cubin_runs_on({.ptx = false, .cc = s}, gpu)) return true;
  return false;
}

// PyTorch's CUDA Support Matrix (RELEASE.md), Linux x86_64, 2.9 to 2.14;
// docs/wheels.md cites each row. 2.10 kept 2.9's rows; 2.11 dropped Volta
// from cu128; 2.12 dropped cu128 and added cu132; 2.13 and 2.14 kept 2.12's.
const std::vector<TorchBuild>& release_matrix() {
  using CCs = std::vector<ComputeCapability>;
  static const CCs kCu126 = {{5, 0}, {6, 0}, {7, 0}, {7, 5}, {8, 0}, {8, 6}, {9, 0}};
  static const CCs kCu128 = {{7, 0}, {7, 5}, {8, 0}, {8, 6}, {9, 0}, {10, 0}, {12, 0}};
  static const CCs kCu128NoVolta = {{7, 5}, {8, 0}, {8, 6}, {9, 0}, {10, 0}, {12, 0}};
  static const CCs kCu13 = {{7, 5}, {8, 0}, {8, 6}, {9, 0}, {10, 0}, {12, 0}};
  static const ComputeCapability kPtx120{12, 0};
  static const std::vector<TorchBuild> kMatrix = {
      {"2.9.1", "cu126", "12.6.3", kCu126, std::nullopt, "525.60.13"},
      {"2.9.1", "cu128", "12.8.1", kCu128, std::nullopt, "525.60.13"},
      {"2.9.1", "cu130", "13.0.0", kCu13, kPtx120, "580.65.06"},
      {"2.10.0", "cu126", "12.6.3", kCu126, std::nullopt, "525.60.13"},
      {"2.10.0", "cu128", "12.8.1", kCu128, std::nullopt, "525.60.13"},
      {"2.10.0", "cu130", "13.0.0", kCu13, kPtx120, "580.65.06"},
      {"2.11.0", "cu126", "12.6.3", kCu126, std::nullopt, "525.60.13"},
      {"2.11.0", "cu128", "12.8.1", kCu128NoVolta, std::nullopt, "525.60.13"},
      {"2.11.0", "cu130", "13.0.2", kCu13, kPtx120, "580.65.06"},
      {"2.12.1", "cu126", "12.6.3", kCu126, std::nullopt, "525.60.13"},
      {"2.12.1", "cu130", "13.0.2", kCu13, kPtx120, "580.65.06"},
      {"2.12.1", "cu132", "13.2.1", kCu13, kPtx120, "580.65.06"},
      {"2.13.0", "cu126", "12.6.3", kCu126, std::nullopt, "525.60.13"},
      {"2.13.0", "cu130", "13.0.2", kCu13, kPtx120, "580.65.06"},
      {"2.13.0", "cu132", "13.2.1", kCu13, kPtx120, "580.65.06"},
      {"2.14.0", "cu126", "12.6.3", kCu126, std::nullopt, "525.60.13"},
      {"2.14.0", "cu130", "13.0.2", kCu13, kPtx120, "580.65.06"},
      {"2.14.0", "cu132", "13.2.1", kCu13, kPtx120, "580.65.06"},
  };
  return kMatrix;
}

WheelTableEnd wheel_table_end() { return {"2.14", "2026-09-18"}; }

std::string wheel_table_note() {
  WheelTableEnd end = wheel_table_end();
  return "gpuenv's wheel table ends at torch " + std::string(end.release) + " (sources up to " + end.date + ")";
}

std::string release_of(const std::string& v) {
  size_t a = v.find('.');
  if (a == std::string::npos || a == 0) return "";
  size_t b = a + 1;
  while (b < v.size() && v[b] >= '0' && v[b] <= '9') ++b;
  if (b == a + 1) return "";
  for (size_t i = 0; i < a; ++i)
    if (v[i] < '0' || v[i] > '9') return "";
  return v.substr(0, b);
}

std::vector<const TorchBuild*> builds_of(const std::string& release) {
  std::vector<const TorchBuild*> out;
  if (release.empty()) return out;
  for (const auto& b : release_matrix())
    if (release_of(b.torch) == release) out.push_back(&b);
  return out;
}

std::vector<const TorchBuild*> recommended_builds() {
  return builds_of(release_of(release_matrix().back().torch));
}

std::vector<const TorchBuild*> image_builds() { return builds_of("2.14"); }

std::optional<int> driver_cuda(const Nvidia& n) {
  if (n.cuda_driver_version) return n.cuda_driver_version;
  if (!n.driver_version) return std::nullopt;
  std::optional<int> out;
  for (const auto& row : toolkit_drivers())
    if (compare_driver_versions(*n.driver_version, row.full) >= 0) out = row.cuda;
  return out;
}

bool runs_by_minor_compat(const Nvidia& n, int have, int need) {
  const ToolkitDriver* td = toolkit_driver(need);
  return td && have / 1000 == need / 1000 &&
         (!n.driver_version || compare_driver_versions(*n.driver_version, td->minor_compat) >= 0);
}

bool carries_all(const TorchBuild& b, const std::vector<ComputeCapability>& gpus) {
  for (auto cc : gpus)
    if (!any_cubin_runs(b.sass, cc)) return false;
  return true;
}

namespace {

int cuda_of(const TorchBuild& b) { return cuda_number(b.cuda).value_or(0); }

// Builds to choose among, in order, and the version each list pins.
struct Candidates {
  std::vector<const TorchBuild*> builds;
  std::string version;  // "" : each build's own
  bool past_table = false;
};

// The user's release first (pinned to their patch), then the newest; past
// the table, only the newest release's lines under the user's own version.
std::vector<Candidates> candidates(const std::optional<TorchVersion>& own) {
  std::vector<const TorchBuild*> newest = recommended_builds();
  if (!own) return {{newest, ""}};
  std::string release = std::to_string(own->major) + "." + std::to_string(own->minor);
  if (auto mine = builds_of(release); !mine.empty()) return {{mine, own->release_version()}, {newest, ""}};
  if (own->compare_release(*parse_torch_version(wheel_table_end().release)) > 0)
    return {{newest, own->release_version(), true}};
  return {{newest, ""}};
}

// Builds run oldest CUDA first: under the ceiling the last that carries the
// GPUs (the newest CUDA), beyond it the first (the least beyond).
const TorchBuild* pick(const Candidates& c, const std::vector<ComputeCapability>& gpus, const Nvidia& n,
                       bool* minor_compat) {
  std::optional<int> ceiling = driver_cuda(n);
  const TorchBuild* best = nullptr;
  for (const TorchBuild* b : c.builds)
    if (carries_all(*b, gpus) && (!ceiling || cuda_of(*b) <= *ceiling)) best = b;
  if (best || !ceiling) return best;
  for (const TorchBuild* b : c.builds)
    if (carries_all(*b, gpus) && runs_by_minor_compat(n, *ceiling, cuda_of(*b))) {
      *minor_compat = true;
      return b;
    }
  return nullptr;
}

WheelChoice chosen(const Candidates& c, const TorchBuild* b) {
  WheelChoice out;
  out.build = b;
  out.version = c.version.empty() ? b->torch : c.version;
  out.past_table = c.past_table;
  return out;
}

// No build runs on this driver: the build of the least CUDA that carries
// the GPUs, after the GA driver of its CUDA.
std::optional<WheelChoice> after_driver_upgrade(const std::vector<Candidates>& lists,
                                                const std::vector<ComputeCapability>& gpus) {
  for (const Candidates& c : lists)
    for (const TorchBuild* b : c.builds) {
      if (!carries_all(*b, gpus)) continue;
      WheelChoice out = chosen(c, b);
      const ToolkitDriver* td = toolkit_driver(cuda_of(*b));
      out.driver_first = td ? td->full : b->min_driver;
      return out;
    }
  return std::nullopt;
}

}  // namespace

WheelChoice choose_wheel(const std::vector<ComputeCapability>& gpus, const Nvidia& n,
                         const std::string& installed) {
  std::optional<TorchVersion> own;
  if (!installed.empty()) own = parse_torch_version(installed);
  WheelChoice none;
  if (own && own->not_reinstallable()) {
    none.not_reinstallable = true;
    return none;
  }
  std::vector<Candidates> lists = candidates(own);
  for (const Candidates& c : lists) {
    bool minor_compat = false;
    if (const TorchBuild* b = pick(c, gpus, n, &minor_compat)) {
      WheelChoice out = chosen(c, b);
      out.minor_compat = minor_compat;
      return out;
    }
  }
  if (auto up = after_driver_upgrade(lists, gpus)) return *up;
  none.past_table = lists.front().past_table;
  none.version = lists.front().version;
  return none;
}

std::string pip_install(const TorchBuild& b, const std::string& version) {
  return "pip install --force-reinstall torch==" + (version.empty() ? std::string(b.torch) : version) +
         " --index-url https://download.pytorch.org/whl/" + b.variant;
}

}  // namespace gpuenv

#include "decide/wheels.h"

#include "decide/kernel_compat.h"

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

// CUDA Toolkit release notes, "CUDA Toolkit and Corresponding Driver
// Versions" (Linux, GA), and the CUDA Compatibility guide's minor-version
// table: 11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580.
const ToolkitDriver* toolkit_driver(int cuda) {
  static const std::vector<ToolkitDriver> kTable = {
      {11000, "450.51.06", "450.80.02"}, {11080, "520.61.05", "450.80.02"},
      {12000, "525.60.13", "525.60.13"}, {12010, "530.30.02", "525.60.13"},
      {12020, "535.54.03", "525.60.13"}, {12030, "545.23.06", "525.60.13"},
      {12040, "550.54.14", "525.60.13"}, {12050, "555.42.02", "525.60.13"},
      {12060, "560.28.03", "525.60.13"}, {12080, "570.26", "525.60.13"},
      {12090, "575.51.03", "525.60.13"}, {13000, "580.65.06", "580.65.06"},
  };
  const ToolkitDriver* best = nullptr;
  for (const auto& row : kTable)
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

bool wheel_runs_natively(const WheelArchs& w, ComputeCapability gpu) {
  return any_cubin_runs(w.sass, gpu);
}

const WheelArchs* best_wheel(const std::vector<ComputeCapability>& gpus,
                             std::optional<int> driver_cuda) {
  const WheelArchs* best = nullptr;
  for (const auto& w : wheel_table()) {
    if (driver_cuda && w.cuda > *driver_cuda) continue;
    bool all = true;
    for (auto cc : gpus) all = all && wheel_runs_natively(w, cc);
    if (all) best = &w;
  }
  return best;
}

std::string pip_install(const WheelArchs& w) {
  return std::string("pip install torch --index-url https://download.pytorch.org/whl/") +
         w.variant;
}

}  // namespace gpuenv

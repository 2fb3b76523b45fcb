#include "store/fingerprint.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <vector>

namespace gpuenv::store {
namespace {

// FNV-1a, 64 bits: small, stable, enough to tell machines apart.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string cuda_text(const std::optional<int>& v) {
  if (!v) return "?";
  return std::to_string(*v / 1000) + "." + std::to_string(*v % 1000 / 10);
}

}  // namespace

std::string fingerprint(const Machine& m) {
  std::vector<std::string> ids;
  for (const auto& g : m.gpus) ids.push_back(g.uuid.value_or("index:" + std::to_string(g.index)));
  std::sort(ids.begin(), ids.end());
  std::string text;
  for (const auto& id : ids) text += id + ";";
  text += "driver=" + m.nvidia.driver_version.value_or("?") + ";cuda=" + cuda_text(m.nvidia.cuda_driver_version);
  return text_fingerprint(text);
}

std::string text_fingerprint(const std::string& text) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "fp-%016llx", static_cast<unsigned long long>(fnv1a(text)));
  return buf;
}

std::string command_fingerprint(const std::vector<std::string>& argv, const std::string& cwd) {
  // Each word with its length first: {"a b"} and {"a", "b"} differ.
  std::string text = "cwd:" + std::to_string(cwd.size()) + ":" + cwd;
  for (const auto& a : argv) text += ";" + std::to_string(a.size()) + ":" + a;
  return text_fingerprint(text);
}

std::string describe_machine(const Machine& m) {
  std::map<std::string, int> models;
  for (const auto& g : m.gpus) ++models[g.name.value_or("unknown GPU")];
  std::string out;
  for (const auto& [name, n] : models) out += (out.empty() ? "" : " + ") + std::to_string(n) + "x " + name;
  if (out.empty()) out = "no GPU";
  return out + ", driver " + m.nvidia.driver_version.value_or("?") + ", CUDA " +
         cuda_text(m.nvidia.cuda_driver_version);
}

}  // namespace gpuenv::store

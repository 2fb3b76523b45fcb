#include "decide/arch.h"

#include <algorithm>

namespace gpuenv {
namespace {

std::string device_name(const VisibleDevice& d) {
  if (d.mig && d.mig->name) return *d.mig->name;
  return d.gpu->name.value_or("GPU " + std::to_string(d.gpu->index));
}

std::string device_label(const VisibleDevice& d) {
  if (!d.cc_known()) return device_name(d) + " (cc unknown)";
  const ArchInfo* a = arch_info(d.cc());
  if (!a) return device_name(d) + " (cc " + cc_string(d.cc()) + ")";
  return device_name(d) + " (" + a->family + ", " + cc_string(d.cc()) + ")";
}

}  // namespace

std::string describe_devices(const std::vector<VisibleDevice>& devices) {
  std::vector<std::pair<std::string, int>> groups;  // label, count; first-seen order
  for (const auto& d : devices) {
    std::string label = device_label(d);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == label; });
    if (it == groups.end())
      groups.push_back({label, 1});
    else
      ++it->second;
  }
  std::string out;
  for (const auto& [label, n] : groups)
    out += (out.empty() ? "" : ", ") + (n > 1 ? std::to_string(n) + "x " : "") + label;
  return out;
}

std::optional<std::vector<ComputeCapability>> distinct_ccs(
    const std::vector<VisibleDevice>& devices) {
  std::vector<ComputeCapability> out;
  for (const auto& d : devices) {
    if (!d.cc_known()) return std::nullopt;
    out.push_back(d.cc());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string describe_unknown_cc(const std::vector<VisibleDevice>& devices) {
  std::vector<VisibleDevice> unknown;
  for (const auto& d : devices)
    if (!d.cc_known()) unknown.push_back(d);
  return describe_devices(unknown);
}

}  // namespace gpuenv

#include "model/hardware/kernel_target.h"

namespace gpuenv {
namespace {

constexpr char kCubinPrefix[] = "sm_";
constexpr char kPtxPrefix[] = "compute_";

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::tuple<bool, int, int, int, std::string> listing_key(const std::string& name) {
  std::optional<KernelTarget> t = parse_kernel_target(name);
  if (!t) return {true, 0, 0, 0, name};
  return {false, t->ptx, t->cc.value(), static_cast<int>(t->variant), name};
}

}  // namespace

ComputeCapability cc_from_arch(int arch) { return {arch / 10, arch % 10}; }

std::string kernel_target_name(const KernelTarget& t) {
  std::string suffix = t.variant == TargetVariant::kArchSpecific ? "a"
                       : t.variant == TargetVariant::kFamily     ? "f"
                                                                 : "";
  return (t.ptx ? kPtxPrefix : kCubinPrefix) + std::to_string(t.cc.value()) + suffix;
}

std::optional<KernelTarget> parse_kernel_target(const std::string& name) {
  KernelTarget t;
  std::string rest;
  if (starts_with(name, kCubinPrefix)) {
    rest = name.substr(sizeof kCubinPrefix - 1);
  } else if (starts_with(name, kPtxPrefix)) {
    t.ptx = true;
    rest = name.substr(sizeof kPtxPrefix - 1);
  } else {
    return std::nullopt;
  }
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    t.variant = rest.back() == 'a' ? TargetVariant::kArchSpecific : TargetVariant::kFamily;
    rest.pop_back();
  }
  if (rest.size() < 2 || rest.size() > 3 || rest.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  t.cc = cc_from_arch(std::stoi(rest));
  return t;
}

bool target_listed_before(const std::string& a, const std::string& b) { return listing_key(a) < listing_key(b); }

}  // namespace gpuenv

// tf32: fp32 matmuls on TF32 tensor cores when every visible GPU has them
// (Ampere, cc 8.0, and newer). docs/rules/tf32.md
#include "decide/arch.h"
#include "decide/rules.h"

namespace gpuenv {
namespace {

std::vector<VisibleDevice> without_tf32(const std::vector<VisibleDevice>& devices) {
  std::vector<VisibleDevice> out;
  for (const auto& d : devices)
    if (d.cc().major < 8) out.push_back(d);
  return out;
}

Decision enable(const Visibility& v) {
  std::string gpus = describe_devices(v.devices);
  Decision d;
  std::string why = "fp32 matmuls on TF32 tensor cores (10-bit mantissa, fp32 range) of " + gpus;
  why += ": ~3x on H200 for an fp32 GPT-2 loop (54.9k -> 161k tokens/s)";
  d.settings.push_back(make_setting("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1", why));
  d.settings.push_back(make_setting("GPUENV_TF32", "1", "for scripts: TF32 tensor cores on " + gpus));
  return d;
}

Decision disable(const Visibility& v, const std::vector<VisibleDevice>& old) {
  std::string why = "no TF32 tensor cores (Ampere, cc 8.0+) on " + describe_devices(old);
  if (old.size() < v.devices.size()) why += ", so TORCH_ALLOW_TF32_CUBLAS_OVERRIDE stays unset";
  Decision d;
  d.settings.push_back(make_setting("GPUENV_TF32", "0", "for scripts: " + why));
  return d;
}

}  // namespace

Decision rule_tf32(const Machine& m, const Options& o) {
  Visibility v = visible_devices(m, o);
  if (v.devices.empty()) return {};
  if (!distinct_ccs(v.devices)) {
    Decision d;
    d.notes.push_back({Severity::kWarning, "",
                       "TF32 left alone: the compute capability of " +
                           describe_unknown_cc(v.devices) + " could not be sensed"});
    return d;
  }
  auto old = without_tf32(v.devices);
  return old.empty() ? enable(v) : disable(v, old);
}

}  // namespace gpuenv

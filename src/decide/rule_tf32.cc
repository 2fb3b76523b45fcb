// tf32: fp32 matmuls on TF32 tensor cores when every visible GPU has them
// (model/arch_table.h: Ampere, cc 8.0, and newer). docs/rules/tf32.md
#include "decide/arch.h"
#include "decide/rules.h"

namespace gpuenv {
namespace {

// Where the gain was measured (docs/performance.md, "TF32"): cited only
// when every visible GPU is that model.
struct Measured {
  const char* gpu;  // NVML name
  const char* figure;
};
constexpr Measured kMeasured[] = {
    {"NVIDIA H200",
     "2.9x for an fp32 GPT-2-small training loop on one H200 (52.0k -> 150.7k tokens/s)"},
};

std::string measured_on(const std::vector<VisibleDevice>& devices) {
  for (const Measured& m : kMeasured) {
    bool all = true;
    for (const auto& d : devices) all = all && !d.mig && d.gpu->name == m.gpu;
    if (all) return std::string(": ") + m.figure;
  }
  return "";
}

std::vector<VisibleDevice> select(const std::vector<VisibleDevice>& devices,
                                  bool (*keep)(const std::optional<TensorFormats>&)) {
  std::vector<VisibleDevice> out;
  for (const auto& d : devices)
    if (keep(tensor_formats(d.cc()))) out.push_back(d);
  return out;
}

Decision enable(const Visibility& v) {
  std::string gpus = describe_devices(v.devices);
  Decision d;
  std::string why = "fp32 matmuls on TF32 tensor cores (10-bit mantissa, fp32 range) of " + gpus;
  d.settings.push_back(
      make_setting("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1", why + measured_on(v.devices)));
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

Decision left_alone(const std::string& why) {
  Decision d;
  d.notes.push_back({Severity::kWarning, "", "TF32 left alone: " + why});
  return d;
}

}  // namespace

Decision rule_tf32(const Machine& m, const Options& o) {
  Visibility v = visible_devices(m, o);
  if (v.devices.empty()) return {};
  if (!distinct_ccs(v.devices))
    return left_alone("the compute capability of " + describe_unknown_cc(v.devices) +
                      " could not be sensed");
  auto unknown = select(v.devices, [](const std::optional<TensorFormats>& t) { return !t; });
  if (!unknown.empty())
    return left_alone("gpuenv does not know the tensor cores of " + describe_devices(unknown));
  auto old = select(v.devices, [](const std::optional<TensorFormats>& t) { return !t->tf32; });
  return old.empty() ? enable(v) : disable(v, old);
}

}  // namespace gpuenv

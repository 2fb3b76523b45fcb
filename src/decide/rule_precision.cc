// precision: the autocast dtype and the FP8/FP4 tensor-core formats every
// visible GPU supports, published for scripts. docs/rules/precision.md
#include <functional>

#include "decide/arch.h"
#include "decide/rules.h"

namespace gpuenv {
namespace {

using Pred = std::function<bool(const VisibleDevice&)>;

std::vector<VisibleDevice> select(const std::vector<VisibleDevice>& devices, const Pred& keep) {
  std::vector<VisibleDevice> out;
  for (const auto& d : devices)
    if (keep(d)) out.push_back(d);
  return out;
}

Setting autocast(const std::vector<VisibleDevice>& devices) {
  auto below = [&](int major) {
    return select(devices, [&](const VisibleDevice& d) { return d.cc().major < major; });
  };
  if (auto old = below(7); !old.empty())
    return make_setting("GPUENV_AUTOCAST_DTYPE", "float32",
                   "no tensor cores on " + describe_devices(old) +
                       " (they start with Volta, cc 7.0): mixed precision gains little, so stay in "
                       "float32");
  if (auto old = below(8); !old.empty())
    return make_setting("GPUENV_AUTOCAST_DTYPE", "float16",
                   "fp16 but no bf16 tensor cores on " + describe_devices(old) +
                       ": autocast to float16 and scale the loss with a GradScaler");
  return make_setting("GPUENV_AUTOCAST_DTYPE", "bfloat16",
                 "bf16 tensor cores on " + describe_devices(devices) +
                     ": bfloat16 keeps fp32's range, so autocast needs no GradScaler");
}

// GPUENV_FP8 / GPUENV_FP4: 1 when every visible GPU multiplies the format.
Setting format_flag(const std::vector<VisibleDevice>& devices, const std::string& name,
                    bool TensorFormats::*has, const std::string& needs) {
  auto lacking =
      select(devices, [&](const VisibleDevice& d) { return !(arch_info(d.cc())->tensor.*has); });
  if (lacking.empty())
    return make_setting(name, "1",
                   "for scripts: " + needs + " tensor cores on " + describe_devices(devices));
  return make_setting(name, "0",
                 "for scripts: no " + needs + " tensor cores on " + describe_devices(lacking));
}

Note warning(std::string message) { return {Severity::kWarning, "", std::move(message)}; }

}  // namespace

Decision rule_precision(const Machine& m, const Options& o) {
  Decision d;
  Visibility v = visible_devices(m, o);
  if (v.devices.empty()) return d;
  if (!distinct_ccs(v.devices)) {
    d.notes.push_back(warning("precision left alone: the compute capability of " +
                              describe_unknown_cc(v.devices) + " could not be sensed"));
    return d;
  }
  d.settings.push_back(autocast(v.devices));
  auto unknown = select(v.devices, [](const VisibleDevice& x) { return !arch_info(x.cc()); });
  if (!unknown.empty()) {
    d.notes.push_back(
        warning("GPUENV_FP8 and GPUENV_FP4 left unset: gpuenv does not know the "
                "tensor cores of " +
                describe_devices(unknown)));
    return d;
  }
  d.settings.push_back(
      format_flag(v.devices, "GPUENV_FP8", &TensorFormats::fp8, "FP8 (Ada/Hopper, cc 8.9+)"));
  d.settings.push_back(
      format_flag(v.devices, "GPUENV_FP4", &TensorFormats::fp4, "FP4 (Blackwell, cc 10.0+)"));
  return d;
}

}  // namespace gpuenv

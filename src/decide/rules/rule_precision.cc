// precision: the autocast dtype and the FP8/FP4 tensor-core formats every
// visible GPU supports (model/hardware/arch_table.h), published for scripts.
// docs/rules/precision.md
#include "decide/arch.h"
#include "decide/rules/rules.h"

namespace gpuenv {
namespace {

using Format = bool TensorFormats::*;

// The devices whose tensor cores lack `format`; every device's are known.
std::vector<VisibleDevice> lacking(const std::vector<VisibleDevice>& devices, Format format) {
  std::vector<VisibleDevice> out;
  for (const auto& d : devices)
    if (!((*tensor_formats(d.cc())).*format)) out.push_back(d);
  return out;
}

Setting autocast(const std::vector<VisibleDevice>& devices) {
  if (auto old = lacking(devices, &TensorFormats::fp16); !old.empty())
    return make_setting("GPUENV_AUTOCAST_DTYPE", "float32",
                   "no tensor cores on " + describe_devices(old) +
                       " (they start with Volta, cc 7.0): mixed precision gains little, so stay in "
                       "float32");
  if (auto old = lacking(devices, &TensorFormats::bf16); !old.empty())
    return make_setting("GPUENV_AUTOCAST_DTYPE", "float16",
                   "fp16 but no bf16 tensor cores on " + describe_devices(old) +
                       ": autocast to float16 and scale the loss with a GradScaler");
  return make_setting("GPUENV_AUTOCAST_DTYPE", "bfloat16",
                 "bf16 tensor cores on " + describe_devices(devices) +
                     ": bfloat16 keeps fp32's range, so autocast needs no GradScaler");
}

// GPUENV_FP8 / GPUENV_FP4: 1 when every visible GPU multiplies the format.
Setting format_flag(const std::vector<VisibleDevice>& devices, const std::string& name,
                    Format format, const std::string& needs) {
  auto without = lacking(devices, format);
  if (without.empty())
    return make_setting(name, "1",
                   "for scripts: " + needs + " tensor cores on " + describe_devices(devices));
  return make_setting(name, "0",
                 "for scripts: no " + needs + " tensor cores on " + describe_devices(without));
}

}  // namespace

Decision rule_precision(const Machine& m, const Options& o) {
  Visibility v = visible_devices(m, o);
  if (v.devices.empty()) return {};
  if (!distinct_ccs(v.devices))
    return left_alone("precision", "the compute capability of " + describe_unknown_cc(v.devices) +
                      " could not be sensed");
  std::vector<VisibleDevice> unknown;
  for (const auto& d : v.devices)
    if (!tensor_formats(d.cc())) unknown.push_back(d);
  if (!unknown.empty())
    return left_alone("precision", "gpuenv does not know the tensor cores of " + describe_devices(unknown));
  Decision d;
  d.settings.push_back(autocast(v.devices));
  d.settings.push_back(
      format_flag(v.devices, "GPUENV_FP8", &TensorFormats::fp8, "FP8 (Ada/Hopper, cc 8.9+)"));
  d.settings.push_back(
      format_flag(v.devices, "GPUENV_FP4", &TensorFormats::fp4, "FP4 (Blackwell, cc 10.0+)"));
  return d;
}

}  // namespace gpuenv

// tf32: fp32 matmuls on TF32 tensor cores when every visible GPU has them
// (model/hardware/arch_table.h: Ampere, cc 8.0, and newer). docs/rules/tf32.md
#include "decide/arch.h"
#include "decide/rules/rules.h"
#include "decide/torch_version.h"
#include "model/hardware/measured_gains.h"

namespace gpuenv {
namespace {

// Where the gain was measured (model/hardware/measured_gains.h): cited
// only when every visible GPU is that model.
std::string measured_on(const std::vector<VisibleDevice>& devices) {
  for (const MeasuredGain& m : kTf32Gains) {
    bool all = true;
    for (const auto& d : devices) all = all && !d.mig && d.gpu->name == m.gpu;
    if (all) return ": " + describe(m);
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

// torch 2.9 made its second TF32 switch (torch.backends.cuda.matmul.
// fp32_precision) public; from then on the override needs the start-up hook
// that keeps the two switches in step (python/sitecustomize.py). An unknown
// torch may be one of those.
bool needs_hook(const Machine& m) {
  if (!m.torch) return true;
  std::optional<TorchVersion> v = parse_torch_version(m.torch->version);
  return !v || v->at_least(2, 9);
}

// What the override does where the hook is not loaded.
const std::string kWithoutHook =
    "TF32 stays on (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 needs no hook), but without gpuenv's start-up hook a torch "
    "2.9+ script that sets torch.backends.cuda.matmul.fp32_precision may fail with \"mix of the legacy and new APIs\"";

Setting hook(const Options& o) {
  Setting s = make_setting("PYTHONPATH", o.python_hook_dir,
                           "gpuenv's start-up hook: a script that sets torch.backends.cuda.matmul.fp32_precision "
                           "also sets the legacy TF32 switch, so torch 2.9+ does not fail with \"mix of the legacy "
                           "and new APIs\" under the override (it imports nothing until torch is imported)");
  s.search_path = true;
  return s;
}

Decision enable(const Machine& m, const Options& o, const Visibility& v) {
  std::string gpus = describe_devices(v.devices);
  Decision d;
  std::string why = "fp32 matmuls on TF32 tensor cores (10-bit mantissa, fp32 range) of " + gpus;
  d.settings.push_back(
      make_setting("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1", why + measured_on(v.devices)));
  if (!o.python_hook_dir.empty() && needs_hook(m)) {
    d.settings.push_back(hook(o));
    const std::string* path = o.getenv("PYTHONPATH");
    const std::string* yours = o.getenv("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE");  // kept: the hook does nothing but at 1
    if (path && path->empty() && !o.override_user && (!yours || *yours == "1"))
      d.notes.push_back({Severity::kWarning, "", "your PYTHONPATH is set empty, and gpuenv keeps it: " + kWithoutHook +
                                                     "; unset it (or --override) to have gpuenv's start-up hook"});
  }
  if (!o.python_hook_refused.empty() && needs_hook(m))
    d.notes.push_back({Severity::kWarning, "",
                       "gpuenv's start-up hook was left off PYTHONPATH: " + o.python_hook_refused +
                           "; without it, a torch 2.9+ script that sets torch.backends.cuda.matmul.fp32_precision "
                           "may fail with \"mix of the legacy and new APIs\""});
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
  if (!distinct_ccs(v.devices))
    return left_alone("TF32", "the compute capability of " + describe_unknown_cc(v.devices) +
                      " could not be sensed");
  auto unknown = select(v.devices, [](const std::optional<TensorFormats>& t) { return !t; });
  if (!unknown.empty())
    return left_alone("TF32", "gpuenv does not know the tensor cores of " + describe_devices(unknown));
  auto old = select(v.devices, [](const std::optional<TensorFormats>& t) { return !t->tf32; });
  return old.empty() ? enable(m, o, v) : disable(v, old);
}

}  // namespace gpuenv

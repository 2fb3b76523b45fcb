// devices: CUDA_DEVICE_ORDER=PCI_BUS_ID, and what CUDA_VISIBLE_DEVICES hides.
// docs/rules/devices.md
#include <set>

#include "decide/rules.h"
#include "decide/visible.h"

namespace gpuenv {
namespace {

// The distinct GPU models present, in NVML order ("RTX 3090, RTX 4090").
std::string models(const Machine& m) {
  std::set<std::string> seen;
  std::string out;
  for (const auto& g : m.gpus) {
    std::string name = g.name.value_or("unknown GPU");
    if (!seen.insert(name).second) continue;
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

std::string order_reason(const Machine& m) {
  std::string why = "CUDA's default FASTEST_FIRST may number GPUs differently from nvidia-smi";
  if (m.gpus.size() > 1 && models(m).find(", ") != std::string::npos)
    why = "this box mixes " + models(m) +
          ", which CUDA's default FASTEST_FIRST numbers "
          "fastest first, unlike nvidia-smi";
  return why + "; PCI bus order makes CUDA_VISIBLE_DEVICES indices mean what nvidia-smi shows";
}

std::optional<Note> visibility_note(const Machine& m, const Options& o) {
  Visibility v = visible_devices(m, o);
  if (v.problem) {
    std::string msg = *v.problem;
    if (v.devices.empty()) msg += ", so CUDA will see no GPU";
    return Note{Severity::kWarning, "",
                msg +
                    "; fix: list device indices or GPU-/MIG- UUIDs from `nvidia-smi -L`, "
                    "comma-separated"};
  }
  if (v.restricted && v.devices.empty())
    return Note{Severity::kWarning, "",
                "CUDA_VISIBLE_DEVICES=" + *o.getenv("CUDA_VISIBLE_DEVICES") +
                    " hides every GPU, so CUDA will see none; fix: unset it or list the "
                    "GPUs to use (e.g. CUDA_VISIBLE_DEVICES=0)"};
  return std::nullopt;
}

}  // namespace

Decision rule_devices(const Machine& m, const Options& o) {
  Decision d;
  if (m.gpus.empty()) return d;
  d.settings.push_back(make_setting("CUDA_DEVICE_ORDER", "PCI_BUS_ID", order_reason(m)));
  if (auto note = visibility_note(m, o)) d.notes.push_back(*note);
  return d;
}

}  // namespace gpuenv

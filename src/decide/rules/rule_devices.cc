// devices: CUDA_DEVICE_ORDER=PCI_BUS_ID, what CUDA_VISIBLE_DEVICES hides, and
// lost GPUs left out of it; NVML failing although installed is warned about.
// docs/rules/devices.md
#include <set>

#include "decide/health.h"
#include "decide/rules/rules.h"
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

// NVML or the CUDA driver failing although installed: one line with the fix.
void driver_notes(const Machine& m, Decision* d) {
  for (const auto& p : m.nvidia.problems)
    if (!libraries_absent(p))
      d->notes.push_back({Severity::kWarning, "", p.message + (p.fix.empty() ? "" : "; fix: " + p.fix)});
}

// A lost GPU stays in CUDA's list, and a process that touches it fails:
// when others are healthy, CUDA_VISIBLE_DEVICES names only those, by UUID.
void leave_out_lost(const Machine& m, Decision* d) {
  std::string healthy, lost;
  for (const auto& g : m.gpus) {
    if (g.problem) {
      lost += (lost.empty() ? "GPU " : ", GPU ") + std::to_string(g.index);
      d->notes.push_back({Severity::kWarning, "",
                          "GPU " + std::to_string(g.index) + ": " + g.problem->message +
                              (g.problem->fix.empty() ? "" : "; fix: " + g.problem->fix)});
    } else if (g.uuid) {
      healthy += (healthy.empty() ? "" : ",") + *g.uuid;
    } else {
      return;  // a healthy GPU without a UUID cannot be named
    }
  }
  if (lost.empty() || healthy.empty()) return;
  d->settings.push_back(make_setting("CUDA_VISIBLE_DEVICES", healthy,
                                     lost + " failed as NVML sensed it (see the warning): left out, so "
                                            "CUDA hands out only the healthy GPUs, named by UUID"));
}

}  // namespace

Decision rule_devices(const Machine& m, const Options& o) {
  Decision d;
  driver_notes(m, &d);
  if (m.gpus.empty()) return d;
  d.settings.push_back(make_setting("CUDA_DEVICE_ORDER", "PCI_BUS_ID", order_reason(m)));
  leave_out_lost(m, &d);
  if (auto note = visibility_note(m, o)) d.notes.push_back(*note);
  return d;
}

}  // namespace gpuenv

// arch_list: TORCH_CUDA_ARCH_LIST = the compute capabilities of the visible
// GPUs, so CUDA extensions are built for exactly them. docs/rules/arch_list.md
#include "decide/arch.h"
#include "decide/rules/rules.h"
#include "decide/torch_version.h"

namespace gpuenv {
namespace {

// torch.utils.cpp_extension rejects an arch missing from its supported_arches
// ("Unknown CUDA arch (X.Y) or GPU not supported"). The entries after 9.0 and
// the torch 2.x release that added (or dropped) each.
struct TorchAccepts {
  ComputeCapability cc;
  int since_minor;  // -1: no torch release accepts it
  int until_minor;  // first 2.x that rejects it again; 0: none
};

constexpr TorchAccepts kTorchAccepts[] = {
    {{8, 8}, -1, 0}, {{10, 0}, 6, 0}, {{10, 1}, 7, 9}, {{10, 3}, 9, 0},
    {{11, 0}, 9, 0}, {{12, 0}, 7, 0}, {{12, 1}, 8, 0},
};

bool torch_accepts(const TorchVersion& t, ComputeCapability cc) {
  for (const auto& a : kTorchAccepts) {
    if (a.cc != cc) continue;
    if (a.since_minor < 0 || !t.at_least(2, a.since_minor)) return false;
    return a.until_minor == 0 || !t.at_least(2, a.until_minor);
  }
  return cc <= ComputeCapability{9, 0};  // known to every torch 2.x; later ones: no
}

// The first capability the installed torch would reject, if any.
std::optional<ComputeCapability> rejected(const Machine& m,
                                          const std::vector<ComputeCapability>& ccs) {
  if (!m.torch) return std::nullopt;
  auto t = parse_torch_version(m.torch->version);
  if (!t) return std::nullopt;
  for (auto cc : ccs)
    if (!torch_accepts(*t, cc)) return cc;
  return std::nullopt;
}

std::string join(const std::vector<ComputeCapability>& ccs, bool ptx) {
  std::string out;
  for (auto cc : ccs) out += (out.empty() ? "" : ";") + cc_string(cc);
  return ptx ? out + "+PTX" : out;
}

}  // namespace

Decision rule_arch_list(const Machine& m, const Options& o) {
  Decision d;
  Visibility v = visible_devices(m, o);
  if (v.devices.empty()) {
    d.notes.push_back({Severity::kInfo, "",
                       "no GPU visible, so TORCH_CUDA_ARCH_LIST is left unset; CUDA extensions "
                       "built here would have to name their target GPUs themselves"});
    return d;
  }
  auto ccs = distinct_ccs(v.devices);
  if (!ccs) {
    d.notes.push_back(warning("TORCH_CUDA_ARCH_LIST left unset: the compute capability of " +
                              describe_unknown_cc(v.devices) + " could not be sensed"));
    return d;
  }
  if (auto cc = rejected(m, *ccs)) {
    d.notes.push_back(warning("TORCH_CUDA_ARCH_LIST left unset: torch " + m.torch->version +
                              " does not accept arch " + cc_string(*cc) +
                              " for extensions; fix: upgrade torch, or set it yourself"));
    return d;
  }
  std::string reason =
      "build CUDA extensions for exactly the visible GPUs: " + describe_devices(v.devices);
  if (o.ptx) reason += "; +PTX lets newer GPUs JIT-compile them";
  d.settings.push_back(make_setting("TORCH_CUDA_ARCH_LIST", join(*ccs, o.ptx), reason));
  return d;
}

}  // namespace gpuenv

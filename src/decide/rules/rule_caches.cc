// caches: persistent compile caches under the cache root, one directory per
// GPU architecture, and the largest driver JIT cache when torch's kernels must
// be JIT-compiled from PTX for a visible GPU. docs/rules/caches.md
#include "decide/arch.h"
#include "decide/kernel_compat.h"
#include "decide/rules/rules.h"
#include "decide/torch_version.h"
#include "decide/wheels.h"

namespace gpuenv {
namespace {

const std::string kDriverMaxCache = "4294967296";  // 4 GiB, CUDA_CACHE_MAXSIZE's maximum

enum class Code { kNative, kMaybeNative, kJit, kNone };

Code code_for(ComputeCapability gpu, const WheelArchs& w) {
  if (any_cubin_runs(w.sass, gpu)) return Code::kNative;
  if (w.ptx && ptx_jits_for({.ptx = true, .cc = *w.ptx}, gpu)) return Code::kJit;
  return any_cubin_runs(w.some_sass, gpu) ? Code::kMaybeNative : Code::kNone;
}

// A directory name ("sm90-sm100"), not a target name (model/hardware/
// kernel_target.h's "sm_90"): caches made under it stay found.
std::string arch_key(const std::vector<ComputeCapability>& ccs) {
  std::string key;
  for (auto cc : ccs) key += (key.empty() ? "sm" : "-sm") + std::to_string(cc.value());
  return key;
}

std::vector<Setting> directories(const std::string& root, const std::string& key) {
  std::string per = ", one directory per GPU architecture (" + key + ")";
  return {
      make_setting("CUDA_CACHE_PATH", root + "/cuda/" + key,
              "the driver's JIT cache under the gpuenv cache root" + per),
      make_setting("TORCHINDUCTOR_CACHE_DIR", root + "/inductor/" + key,
              "torch.compile's Inductor cache survives reboots (default /tmp/torchinductor_$USER)" +
                  per),
      make_setting("TRITON_CACHE_DIR", root + "/triton/" + key,
              "Triton's compiled kernels under the gpuenv cache root" + per),
  };
}

Note no_maxsize(const std::string& why) {
  return {Severity::kInfo, "", "CUDA_CACHE_MAXSIZE left at the driver default: " + why};
}

// Why torch's kernel set can't be judged; nullopt when it can.
std::optional<std::string> unjudgeable(const Machine& m) {
  if (!m.torch) return "no torch found to tell whether its kernels need JIT compilation";
  const Torch& t = *m.torch;
  if (!t.cuda_version) return "torch " + t.version + " is a CPU build";
  auto v = parse_torch_version(t.version);
  if (!v || !v->official_build())
    return "torch " + t.version +
           " is not an official wheel, so gpuenv can't tell which GPUs it carries SASS for";
  return std::nullopt;
}

std::vector<VisibleDevice> with_code(const Visibility& v, const WheelArchs& w, Code code) {
  std::vector<VisibleDevice> out;
  for (const auto& d : v.devices)
    if (code_for(d.cc(), w) == code) out.push_back(d);
  return out;
}

Setting maxsize(const Torch& t, const WheelArchs& w, const std::vector<VisibleDevice>& jit) {
  return make_setting("CUDA_CACHE_MAXSIZE", kDriverMaxCache,
                 "torch " + t.version + " may lack SASS for " + describe_devices(jit) +
                     "; its kernels then JIT-compile from compute_" +
                     std::to_string(w.ptx->value()) + " PTX, kept by the driver's 4 GiB maximum");
}

Note no_code(const Torch& t, const std::vector<VisibleDevice>& none) {
  return {Severity::kWarning, "",
          "torch " + t.version + " carries neither SASS nor usable PTX for " +
              describe_devices(none) +
              ": its CUDA kernels fail with \"no kernel image is available\"; fix: install a "
              "torch build whose CUDA variant supports this GPU"};
}

// CUDA_CACHE_MAXSIZE when a visible GPU needs JIT-compiled kernels, and the
// notes saying why it can't be judged or why nothing will run.
void decide_maxsize(const Machine& m, const Visibility& v, Decision* d) {
  if (auto why = unjudgeable(m)) {
    d->notes.push_back(no_maxsize(*why));
    return;
  }
  std::string variant = variant_of(*m.torch->cuda_version);
  const WheelArchs* w = wheel_for(variant);
  if (!w) {
    d->notes.push_back(no_maxsize("gpuenv has no arch table for " + variant + " wheels"));
    return;
  }
  if (auto jit = with_code(v, *w, Code::kJit); !jit.empty())
    d->settings.push_back(maxsize(*m.torch, *w, jit));
  if (auto none = with_code(v, *w, Code::kNone); !none.empty())
    d->notes.push_back(no_code(*m.torch, none));
}

}  // namespace

Decision rule_caches(const Machine& m, const Options& o) {
  Decision d;
  Visibility v = visible_devices(m, o);
  if (!o.cache_root_refused.empty())
    d.notes.push_back({Severity::kWarning, "", "caches left alone: " + o.cache_root_refused});
  if (o.cache_root.empty() || v.devices.empty()) return d;
  auto ccs = distinct_ccs(v.devices);
  if (!ccs) {
    d.notes.push_back({Severity::kWarning, "",
                       "caches left alone: the compute capability of " +
                           describe_unknown_cc(v.devices) + " could not be sensed"});
    return d;
  }
  d.settings = directories(cache_root_prefix(o), arch_key(*ccs));
  decide_maxsize(m, v, &d);
  return d;
}

}  // namespace gpuenv

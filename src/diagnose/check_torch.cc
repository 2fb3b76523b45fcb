// PyTorch against this machine: a CUDA build at all, a driver new enough for
// its CUDA, and kernels (SASS or PTX) for every visible GPU in libtorch_cuda
// and in the other CUDA libraries of its site-packages.
#include <map>
#include <set>

#include "decide/arch.h"
#include "decide/kernel_compat.h"
#include "decide/torch_version.h"
#include "decide/visible.h"
#include "decide/wheels.h"
#include "diagnose/describe.h"
#include "diagnose/doctor.h"

namespace gpuenv {
namespace {

// Visible devices grouped by compute capability; devices whose capability
// was not sensed are left out.
std::map<ComputeCapability, std::vector<VisibleDevice>> by_cc(const Machine& m,
                                                               const Options& o) {
  std::map<ComputeCapability, std::vector<VisibleDevice>> out;
  for (const auto& d : visible_devices(m, o).devices)
    if (d.cc_known()) out[d.cc()].push_back(d);
  return out;
}

std::vector<ComputeCapability> ccs_of(const Machine& m, const Options& o) {
  std::vector<ComputeCapability> out;
  for (const auto& [cc, devices] : by_cc(m, o)) out.push_back(cc);
  return out;
}

bool any_tegra(const std::vector<ComputeCapability>& ccs) {
  for (auto cc : ccs)
    if (const ArchInfo* a = arch_info(cc); a && a->tegra) return true;
  return false;
}

std::string installed(const Machine& m) { return m.torch ? m.torch->version : ""; }

WheelChoice choice_for(const Machine& m, const std::vector<ComputeCapability>& ccs) {
  return choose_wheel(ccs, m.nvidia, installed(m));
}

// The pip command of a choice; past the table, with what gpuenv cannot know.
std::string install(const WheelChoice& c) {
  std::string cmd = pip_install(*c.build, c.version);
  if (c.past_table)
    cmd += " (" + wheel_table_note() + ": that torch " + c.version + " has a " + c.build->variant +
           " build is not checked)";
  return cmd;
}

// A pre-release, local or vendor torch: what to do instead of a reinstall.
std::string keep_fix(const Machine& m) {
  std::string v = installed(m);
  auto t = parse_torch_version(v);
  if (t && t->nvidia_build())
    return "torch " + v + " is NVIDIA's build (NGC; its container pins it in /etc/pip/constraint.txt), "
           "which no package index serves: use an NGC PyTorch release made for this GPU and driver "
           "(its release notes list both) rather than reinstalling torch";
  return "torch " + v + " is a pre-release or locally built torch, which no release index serves: "
         "rebuild it for this GPU and driver, or install an official release";
}

// The torch build to install for these GPUs with this driver, as a fix:
// choose_wheel's answer (decide/wheels.h, docs/wheels.md).
std::string install_fix(const Machine& m, const std::vector<ComputeCapability>& ccs) {
  if (any_tegra(ccs))
    return "on a Jetson or DRIVE board PyTorch's x86_64 wheels do not apply: install the torch "
           "build NVIDIA publishes for its JetPack release";
  WheelChoice c = choice_for(m, ccs);
  if (c.not_reinstallable) return keep_fix(m);
  if (c.build && c.driver_first)
    return "upgrade the NVIDIA driver to " + *c.driver_first + " or newer, then " + install(c);
  if (c.build) return install(c);
  std::string list;
  for (auto cc : ccs) list += (list.empty() ? "" : ";") + cc_string(cc);
  std::string what = c.past_table ? "torch " + c.version + " is past the table (" + wheel_table_note() +
                                        "), and no build gpuenv knows of"
                                  : "no official torch " + std::string(recommended_builds().back()->torch) +
                                        " build";
  return what + " carries code for this GPU: build PyTorch from source with TORCH_CUDA_ARCH_LIST=\"" +
         list + "\"";
}

// The visible GPUs that no official build of `variant`'s CUDA line has SASS
// or usable PTX for ("V100 (7.0)"); empty when all have, or the line is unknown.
std::vector<std::string> too_old_for(const Machine& m, const Options& o, const std::string& variant) {
  const WheelArchs* w = wheel_for(variant);
  std::vector<std::string> out;
  if (!w) return out;
  for (const auto& [cc, devices] : by_cc(m, o)) {
    std::vector<ComputeCapability> all = w->sass;
    all.insert(all.end(), w->some_sass.begin(), w->some_sass.end());
    bool ptx = w->ptx && cc >= *w->ptx;
    if (!any_cubin_runs(all, cc) && !ptx) out.push_back(describe_devices(devices));
  }
  return out;
}

std::vector<KernelTarget> targets_of(const CudaBinary& b) {
  std::vector<KernelTarget> out;
  for (const auto& name : b.targets)
    if (auto t = parse_kernel_target(name)) out.push_back(*t);
  return out;
}

std::string target_list(const CudaBinary& b) {
  std::string out;
  for (const auto& t : b.targets) out += (out.empty() ? "" : " ") + t;
  return out.empty() ? "no GPU code" : out;
}

// "sm_90 sm_90a": the cubins of `targets` that run on `cc`.
std::string native_cubins(const std::vector<KernelTarget>& targets, ComputeCapability cc) {
  std::string out;
  for (const auto& t : targets)
    if (!t.ptx && cubin_runs_on(t, cc)) out += (out.empty() ? "" : " ") + kernel_target_name(t);
  return out;
}

std::string file_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The driver to name for CUDA `need`: the GA driver of that very release
// when gpuenv knows it and it is newer than this driver.
std::string full_driver(const Nvidia& n, int need) {
  const ToolkitDriver* td = toolkit_driver(need);
  bool known = td && td->cuda == need &&
               (!n.driver_version || compare_driver_versions(*n.driver_version, td->full) < 0);
  return known ? std::string(td->full) + " or newer" : "one that supports CUDA " + cuda_string(need);
}

// ", or install torch 2.14.0+cu130: pip ...": choose_wheel's build when it
// runs on this driver and is not the installed one; "" otherwise.
std::string or_install(const Machine& m, const std::vector<ComputeCapability>& ccs) {
  if (any_tegra(ccs)) return "";
  WheelChoice c = choice_for(m, ccs);
  auto t = parse_torch_version(installed(m));
  if (!c.build || c.driver_first || (t && t->local == c.build->variant)) return "";
  return ", or install torch " + c.version + "+" + c.build->variant + ": " + install(c);
}

// A pre-release, local or vendor torch (NGC's) newer than the driver's
// CUDA: fine by minor-version compatibility; otherwise the driver its CUDA
// major needs, and never a reinstall.
Finding kept_build_compat(const Machine& m, const std::string& seen, int have, int need) {
  if (runs_by_minor_compat(m.nvidia, have, need))
    return ok(seen + ": it runs through minor-version compatibility (the same CUDA major, a driver of "
                     "its branch)");
  const ToolkitDriver* td = toolkit_driver(need);
  std::string branch = td ? "a driver of CUDA " + std::to_string(need / 1000) + "'s branch (" +
                                td->minor_compat + " or newer) runs it"
                          : "a driver that supports CUDA " + cuda_string(need) + " runs it";
  return warning(seen + ": it runs only through a CUDA forward-compatibility package (NGC containers "
                        "carry one for data-center GPUs and the driver branches their release notes list)",
                 branch + "; " + keep_fix(m));
}

}  // namespace

std::vector<Finding> check_torch(const Machine& m, const Options& o) {
  if (m.gpus.empty()) return {};
  if (!m.torch)
    return {warning("no PyTorch found for python3 ($VIRTUAL_ENV, $CONDA_PREFIX, PATH): the "
                    "torch checks were skipped",
                    "name the interpreter: `gpuenv doctor --python /path/to/python`, or " +
                        install_fix(m, ccs_of(m, o)))};
  const Torch& t = *m.torch;
  std::string where = t.path ? " at " + *t.path : "";
  if (!t.cuda_version)
    return {error("torch " + t.version + where +
                      " is a CPU-only build: torch.cuda.is_available() is False on this GPU "
                      "machine",
                  install_fix(m, ccs_of(m, o)))};
  return {ok("torch " + t.version + " (CUDA " + *t.cuda_version + ")" + where)};
}

std::vector<Finding> check_driver_compat(const Machine& m, const Options& o) {
  if (!m.torch || !m.torch->cuda_version || !m.nvidia.cuda_driver_version) return {};
  auto need = cuda_number(*m.torch->cuda_version);
  if (!need) return {};
  int have = *m.nvidia.cuda_driver_version;
  std::string driver = m.nvidia.driver_version.value_or("?");
  std::string seen = "torch " + m.torch->version + " bundles CUDA " + cuda_string(*need) +
                     "; driver " + driver + " supports CUDA " + cuda_string(have);
  if (have >= *need) return {ok(seen)};
  auto t = parse_torch_version(m.torch->version);
  if (t && t->not_reinstallable()) return {kept_build_compat(m, seen, have, *need)};
  std::vector<ComputeCapability> ccs = ccs_of(m, o);
  std::vector<std::string> old = too_old_for(m, o, variant_of(*m.torch->cuda_version));
  if (!old.empty() && !any_tegra(ccs))
    return {error(seen + ", and no CUDA " + cuda_string(*need) + " build of torch carries kernels for " +
                      diag::join(old) + ": a driver upgrade would not make it run",
                  "install a build of a CUDA line that still has them: " + install_fix(m, ccs))};
  std::string fix = "upgrade the NVIDIA driver to " + full_driver(m.nvidia, *need) + or_install(m, ccs);
  if (runs_by_minor_compat(m.nvidia, have, *need))
    return {warning(seen + ": it runs through minor-version compatibility, but the driver "
                           "cannot JIT-compile PTX newer than CUDA " + cuda_string(have) +
                           " and lacks CUDA " + cuda_string(*need) + "'s newer features",
                    fix)};
  return {error(seen + ": CUDA fails with \"CUDA driver version is insufficient for CUDA runtime "
                       "version\" (error 35)",
                fix + " (on a data-center GPU, the cuda-compat package is a third way)")};
}

std::vector<Finding> check_kernels(const Machine& m, const Options& o) {
  if (!m.torch || !m.torch->libtorch_cuda) return {};
  const CudaBinary& b = *m.torch->libtorch_cuda;
  std::string name = file_name(b.path);
  if (b.error)
    return {warning("could not read the GPU code in " + b.path + ": " + *b.error,
                    "reinstall torch; `gpuenv inspect " + b.path + "` shows the failure")};
  std::vector<KernelTarget> targets = targets_of(b);
  std::vector<Finding> out;
  for (const auto& [cc, devices] : by_cc(m, o)) {
    KernelCompat c = kernel_compat(targets, cc);
    std::string who = describe_devices(devices);
    if (c.verdict == KernelVerdict::kNative) {
      out.push_back(ok(name + " runs natively on " + who + ": its " + native_cubins(targets, cc) +
                       " cubins"));
    } else if (c.verdict == KernelVerdict::kPtxJit) {
      out.push_back(warning(name + " on " + who + ": " + c.reason,
                            "run under `gpuenv run` (it raises CUDA_CACHE_MAXSIZE), or " +
                                install_fix(m, {cc})));
    } else {
      out.push_back(error(name + " carries " + target_list(b) + ": nothing runs on " + who +
                              ", so CUDA fails with \"no kernel image is available for "
                              "execution on the device\"",
                          install_fix(m, {cc})));
    }
  }
  return out;
}

std::vector<Finding> check_extensions(const Machine& m, const Options& o) {
  if (!m.torch || m.torch->extensions.empty()) return {};
  auto groups = by_cc(m, o);
  std::vector<Finding> out;
  int native = 0;
  std::set<std::string> native_owners;
  for (const CudaBinary& b : m.torch->extensions) {
    // NVIDIA's own CUDA libraries (the nvidia-* wheels: cuBLAS, cuFFT, ...)
    // support every GPU of their CUDA release whatever their fatbins show:
    // cuFFT 12 carries sm_75 cubins only and builds the rest at run time.
    if (b.package == std::string("nvidia")) continue;
    // The pip distribution when a RECORD names it, else the directory.
    std::optional<std::string> owner = b.distribution ? b.distribution : b.package;
    std::string who = owner ? *owner + " (" + file_name(b.path) + ")" : b.path;
    if (b.error) {
      out.push_back(warning("could not read the GPU code in " + b.path + ": " + *b.error,
                            "reinstall " + owner.value_or("the package that owns it")));
      continue;
    }
    std::vector<KernelTarget> targets = targets_of(b);
    std::vector<std::string> cannot, jit;
    for (const auto& [cc, devices] : groups) {
      KernelVerdict v = kernel_compat(targets, cc).verdict;
      if (v == KernelVerdict::kCannotRun) cannot.push_back(describe_devices(devices));
      if (v == KernelVerdict::kPtxJit) jit.push_back(describe_devices(devices));
    }
    std::string rebuild = "reinstall " + owner.value_or("it") +
                          " in a build for this GPU, or build it from source under `gpuenv run` "
                          "(TORCH_CUDA_ARCH_LIST is set to this machine's GPUs)";
    if (b.distribution)
      rebuild += ": `gpuenv run -- pip install --force-reinstall --no-build-isolation --no-binary " +
                 *b.distribution + " " + *b.distribution + "`";
    if (!cannot.empty())
      out.push_back(error(who + " carries " + target_list(b) + ": nothing runs on " +
                              diag::join(cannot) + " (\"no kernel image is available\")",
                          rebuild));
    else if (!jit.empty())
      out.push_back(warning(who + " runs on " + diag::join(jit) +
                                " only by JIT-compiling PTX: a slow first start",
                            rebuild));
    else {
      ++native;
      if (owner) native_owners.insert(*owner);
    }
  }
  if (native > 0)
    out.insert(out.begin(),
               ok(std::to_string(native) +
                  (native == 1 ? " other CUDA library in site-packages runs"
                               : " other CUDA libraries in site-packages run") +
                  " natively on every visible GPU" +
                  (native_owners.empty() ? "" : " (" + diag::join({native_owners.begin(),
                                                                    native_owners.end()}) + ")")));
  return out;
}

}  // namespace gpuenv

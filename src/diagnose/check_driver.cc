// Driver and devices: NVML, the device nodes, cuInit, the container's GPU
// settings and CUDA_VISIBLE_DEVICES.
#include <cstdio>

#include "decide/export/profiling.h"
#include "decide/visible.h"
#include "diagnose/describe.h"
#include "diagnose/doctor.h"
#include "model/gpu_label.h"

namespace gpuenv {
namespace {

using diag::has_node;

std::vector<Finding> problems_from(const std::vector<Problem>& ps, const std::string& source) {
  std::vector<Finding> out;
  for (const auto& p : ps)
    if (p.source == source) out.push_back(error(p.message, p.fix));
  return out;
}

bool in_container(const Machine& m, const Options& o) {
  return m.host.container.has_value() || o.getenv("NVIDIA_VISIBLE_DEVICES") != nullptr;
}

}  // namespace

std::vector<Finding> check_nvml(const Machine& m, const Options&) {
  std::vector<Finding> out = problems_from(m.nvidia.problems, "nvml");
  for (const auto& g : m.gpus)
    if (g.problem) out.push_back(error(gpu_label(g) + ": " + g.problem->message, g.problem->fix));
  if (!out.empty() || !m.nvidia.nvml_library) return out;
  if (m.gpus.empty())
    return {warning("NVML loaded (driver " + m.nvidia.driver_version.value_or("?") +
                        ") but reports no GPU",
                    "check `nvidia-smi`; in a container, start it with `--gpus all`")};
  return {ok("NVML sees " + std::to_string(m.gpus.size()) + " GPU" +
             (m.gpus.size() == 1 ? "" : "s") + ", driver " +
             m.nvidia.driver_version.value_or("?"))};
}

std::vector<Finding> check_device_nodes(const Machine& m, const Options& o) {
  const Host& h = m.host;
  if (m.gpus.empty() && h.nvidia_device_nodes.empty()) return {};
  std::vector<std::string> missing;
  for (const char* node : {"/dev/nvidiactl", "/dev/nvidia-uvm"})
    if (!has_node(h, node)) missing.push_back(node);
  if (missing.empty()) return {ok("/dev/nvidiactl and /dev/nvidia-uvm exist")};
  std::string fix = in_container(m, o)
                        ? "start the container through the NVIDIA Container Toolkit (`docker run "
                          "--gpus all`, or the nvidia.com/gpu resource in Kubernetes), which "
                          "adds the device nodes"
                        : "load the modules and create the nodes: `sudo nvidia-modprobe -u -c=0` "
                          "(or `sudo modprobe nvidia-uvm`), or enable nvidia-persistenced";
  return {error(diag::join(missing) + (missing.size() == 1 ? " is" : " are") +
                    " missing: CUDA cannot start without them (torch.cuda.is_available() is "
                    "False)",
                fix)};
}

std::vector<Finding> check_cuda_init(const Machine& m, const Options&) {
  std::vector<Finding> out = problems_from(m.nvidia.problems, "cuda");
  if (!out.empty()) return out;
  if (!m.nvidia.cuda_init_result) return {};
  if (*m.nvidia.cuda_init_result == 0)
    return {ok("cuInit succeeded (" + m.nvidia.cuda_library.value_or("libcuda.so.1") + ")")};
  return {error("cuInit failed with CUDA error " + std::to_string(*m.nvidia.cuda_init_result),
                "look in `dmesg` for NVRM or Xid errors")};
}

std::vector<Finding> check_container(const Machine& m, const Options& o) {
  if (!in_container(m, o)) return {};
  std::vector<Finding> out;
  const std::string* visible = o.getenv("NVIDIA_VISIBLE_DEVICES");
  if (visible && (*visible == "void" || *visible == "none" || visible->empty()))
    out.push_back(error("NVIDIA_VISIBLE_DEVICES=" + *visible +
                            ": the NVIDIA container runtime gives this container no GPU",
                        "start it with `--gpus all` (or `-e NVIDIA_VISIBLE_DEVICES=all`)"));
  if (const std::string* caps = o.getenv("NVIDIA_DRIVER_CAPABILITIES");
      caps && caps->find("all") == std::string::npos) {
    std::vector<std::string> missing;
    if (caps->find("compute") == std::string::npos) missing.push_back("compute (libcuda)");
    if (caps->find("utility") == std::string::npos) missing.push_back("utility (NVML, nvidia-smi)");
    if (!missing.empty())
      out.push_back(error("NVIDIA_DRIVER_CAPABILITIES=" + *caps + " lacks " +
                              diag::join(missing) + ": the runtime does not mount those libraries",
                          "start the container with `-e NVIDIA_DRIVER_CAPABILITIES=compute,utility` "
                          "(or `all`)"));
  }
  bool no_nvml = false;
  for (const auto& p : m.nvidia.problems) no_nvml = no_nvml || p.code == "nvml_library_not_found";
  if (out.empty() && no_nvml && m.host.nvidia_device_nodes.empty())
    out.push_back(error("this " + m.host.container.value_or("container") +
                            " container has no NVIDIA device and no NVML: it was started "
                            "without GPUs",
                        "`docker run --gpus all ...` (NVIDIA Container Toolkit), `--device "
                        "nvidia.com/gpu=all` with CDI (Podman), or request nvidia.com/gpu in the "
                        "pod's resources (Kubernetes)"));
  if (out.empty() && !m.gpus.empty())
    out.push_back(ok("the container runtime passed " + std::to_string(m.gpus.size()) +
                     " GPU" + (m.gpus.size() == 1 ? "" : "s") + " through"));
  return out;
}

std::vector<Finding> check_visible_devices(const Machine& m, const Options& o) {
  const std::string* cvd = o.getenv("CUDA_VISIBLE_DEVICES");
  if (!cvd || m.gpus.empty()) return {};
  Visibility v = visible_devices(m, o);
  std::string seen = "CUDA_VISIBLE_DEVICES=\"" + *cvd + "\"";
  std::string fix = "list GPUs by index or UUID as `nvidia-smi -L` shows them, or unset it";
  if (v.devices.empty())
    return {error(seen + " hides every GPU: torch.cuda.is_available() is False" +
                      (v.problem ? " (" + *v.problem + ")" : ""),
                  fix)};
  if (v.problem)
    return {warning(seen + ": " + *v.problem + "; CUDA uses only the " +
                        std::to_string(v.devices.size()) + " device(s) before it",
                    fix)};
  return {ok(seen + " selects " + std::to_string(v.devices.size()) + " device" +
             (v.devices.size() == 1 ? "" : "s"))};
}

// The exporter's DCGM_FI_PROF_* fields on GPUs before Hopper: said, not
// warned about (doctor's exit stays 0): only the exporter misses them.
std::vector<Finding> check_profiling(const Machine& m, const Options&) {
  ProfilingSources s = profiling_sources(m);
  if (s.without_gpm.empty()) return {};
  if (std::optional<std::string> gap = profiling_gap(s)) return {ok(*gap)};
  return {ok("DCGM_FI_PROF_*: `gpuenv export` reads them from DCGM (" + *m.nvidia.dcgm_library + ") on " +
             these_gpus(s.without_gpm) + ", NVML GPM needing Hopper or newer")};
}

}  // namespace gpuenv

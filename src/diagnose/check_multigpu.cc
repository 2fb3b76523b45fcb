// Several GPUs: peer-to-peer where the topology allows it, and the NVLink
// fabric of NVSwitch systems.
#include "decide/health.h"
#include "decide/launcher_env.h"
#include "diagnose/describe.h"
#include "diagnose/doctor.h"

namespace gpuenv {
namespace {

// Topologies below a CPU: P2P over PCIe is expected to work there.
bool under_one_root(const std::string& topology) {
  return topology == "internal" || topology == "single" || topology == "multiple" ||
         topology == "hostbridge";
}

}  // namespace

std::vector<Finding> check_p2p(const Machine& m, const Options& o) {
  std::vector<Finding> out;
  int known = 0;
  for (const auto& p : m.pairs) {
    if (!p.p2p_read) continue;
    ++known;
    if (*p.p2p_read == "ok" || !p.topology || !under_one_root(*p.topology)) continue;
    if (p.p2p_nvlink == std::string("ok")) continue;
    out.push_back(warning(
        "P2P between GPU " + std::to_string(p.a) + " and GPU " + std::to_string(p.b) +
            " is reported " + *p.p2p_read + " although they share a PCIe " +
            (*p.topology == "hostbridge" ? "host bridge" : "switch") +
            ": ACS or the IOMMU is redirecting peer traffic through the CPU",
        "on bare metal, disable ACS on the switch ports or boot with `iommu=pt`; in a VM, "
        "enable P2P in the hypervisor. Setting NCCL_P2P_DISABLE=1 for every job only hides "
        "it"));
  }
  const std::string* disable = o.getenv("NCCL_P2P_DISABLE");
  if (disable && *disable == "1" && known > 0 && out.empty())
    out.push_back(warning("NCCL_P2P_DISABLE=1 is set although P2P works between every pair: "
                          "NCCL copies through host memory at a fraction of the bandwidth",
                          "unset NCCL_P2P_DISABLE"));
  if (out.empty() && known > 0)
    out.push_back(ok("P2P works wherever the topology allows it (" + std::to_string(known) +
                     " pair" + (known == 1 ? "" : "s") + ")"));
  return out;
}

std::vector<Finding> check_fabric(const Machine& m, const Options&) {
  int completed = 0;
  for (const auto& g : m.gpus) completed += g.fabric_state == std::string("completed");
  auto out = health_findings(m, {fabric});
  if (out.empty() && completed > 0)
    out.push_back(ok("the NVLink fabric is up on " + std::to_string(completed) + " GPU" +
                     (completed == 1 ? "" : "s")));
  return out;
}

std::vector<Finding> check_local_rank(const Machine&, const Options& o) {
  LaunchEnv l = launch_env(o);
  std::string why = local_rank_beyond_visible(l, o);
  if (why.empty()) return {};
  return {warning(why, "torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]) % torch.cuda.device_count()); or give "
                       "each task every GPU of the node (srun --gpus-per-node, no --gpus-per-task or --gpu-bind) "
                       "so LOCAL_RANK indexes them")};
}

}  // namespace gpuenv

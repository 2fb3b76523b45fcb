// mig: MIG devices addressed by UUID, one per process, and the MIG states in
// which CUDA can do nothing useful. docs/rules/mig.md
#include "decide/launcher_env.h"
#include "decide/rules/rules.h"
#include "decide/visible.h"
#include "model/gpu_label.h"

namespace gpuenv {
namespace {

std::string mig_label(const VisibleDevice& d) {
  return d.mig->uuid + (d.mig->name ? " (" + *d.mig->name + ")" : "");
}

void warn_empty_mig(const Machine& m, Decision* d) {
  for (const auto& g : m.gpus) {
    if (!g.mig_enabled.value_or(false) || !g.mig_devices.empty() || g.problem) continue;
    std::string i = std::to_string(g.index);
    std::string create = "nvidia-smi mig -i " + i + " -cgi <profile> -C (profiles: nvidia-smi mig -lgip)";
    d->notes.push_back(
        warning(gpu_label(g) + " is in MIG mode with no MIG devices, so CUDA can use nothing on it; " +
                "create them with " + create + ", or leave MIG mode with nvidia-smi -i " + i + " -mig 0"));
  }
}

std::vector<const VisibleDevice*> mig_devices(const Visibility& v) {
  std::vector<const VisibleDevice*> out;
  for (const auto& d : v.devices)
    if (d.mig) out.push_back(&d);
  return out;
}

// torchrun: each local rank gets the MIG device at its LOCAL_RANK.
void pin_rank(const Visibility& v, const LaunchEnv& l, Decision* d) {
  int rank = *l.local_rank;
  if (rank >= static_cast<int>(v.devices.size()) || !v.devices[rank].mig) return;
  const VisibleDevice& dev = v.devices[rank];
  std::string why = "local rank " + std::to_string(rank) + " gets MIG device " + mig_label(dev);
  d->settings.push_back(make_setting("CUDA_VISIBLE_DEVICES", dev.mig->uuid,
                                why + ": a CUDA process can use one MIG device, so each rank names its own "
                                      "by UUID (it is cuda:0 there)"));
  if (l.local_world_size.value_or(1) > 1)
    d->notes.push_back(warning("each rank sees only its own MIG device, as cuda:0: torch.cuda.set_device(LOCAL_RANK) "
                               "fails on ranks above 0 (invalid device ordinal); use torch.cuda.set_device(0) or "
                               "device=\"cuda\""));
}

std::optional<std::string> uuid(const VisibleDevice& d) {
  return d.mig ? std::optional<std::string>(d.mig->uuid) : d.gpu->uuid;
}

void pin_all(const Visibility& v, const std::vector<const VisibleDevice*>& migs, Decision* d) {
  std::string value;
  for (const auto& dev : v.devices) {
    auto id = uuid(dev);
    if (!id) return;  // a whole GPU without a known UUID: keep what selects it now
    value += (value.empty() ? "" : ",") + *id;
  }
  std::string used = mig_label(*migs[0]);
  d->settings.push_back(
      make_setting("CUDA_VISIBLE_DEVICES", value,
              "MIG devices are addressed by UUID; CUDA uses one MIG device per process, here " + used));
  if (migs.size() < 2) return;
  d->notes.push_back(warning(std::to_string(migs.size()) +
                             " MIG devices are visible but a process uses only one (" + migs[0]->mig->uuid +
                             "); run one process per MIG device, each with " +
                             "CUDA_VISIBLE_DEVICES set to its UUID"));
}

// Under torchrun each rank is pinned to one device, so what counts is how
// many local ranks there are; otherwise, how many MIG devices are visible.
void warn_distributed(const std::vector<const VisibleDevice*>& migs, const LaunchEnv& l, Decision* d) {
  int sharing = l.local_rank ? l.local_world_size.value_or(1) : static_cast<int>(migs.size());
  if (sharing < 2) return;
  d->notes.push_back(
      warning("NCCL, and so torch.distributed on GPUs, does not work across MIG devices: use whole GPUs for "
              "distributed training, or the gloo backend"));
}

}  // namespace

Decision rule_mig(const Machine& m, const Options& o) {
  Decision d;
  warn_empty_mig(m, &d);
  Visibility v = visible_devices(m, o);
  std::vector<const VisibleDevice*> migs = mig_devices(v);
  if (migs.empty()) return d;
  LaunchEnv launch = launch_env(o);
  if (launch.local_rank)
    pin_rank(v, launch, &d);
  else
    pin_all(v, migs, &d);
  warn_distributed(migs, launch, &d);
  return d;
}

}  // namespace gpuenv

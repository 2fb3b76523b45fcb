#include "decide/labels/labelers.h"

#include "decide/health.h"

namespace gpuenv {

const std::vector<Labeler>& gpuenv_labelers() {
  using N = LabelerNeeds;
  static const std::vector<Labeler> kLabelers = {
      {"doctor", "doctor's verdict", N::kNothing, false, label_doctor},
      {"count", "the GPUs that can serve", N::kReadable, true, label_count},
      {"driver", "the driver's version", N::kReadable, false, label_driver},
      {"cuda", "the driver's version and the CUDA version it supports, as GFD names them", N::kReadable, true,
       label_cuda},
      {"gpu", "the first GPU's product, memory, compute capability and family", N::kGpu, true, label_gpu},
      {"machine", "the machine's DMI product name", N::kGpu, true, label_machine},
      {"mig", "MIG capability and the strategy the layout fits, with the MIG devices", N::kGpu, true, label_mig},
      {"formats", "the tensor formats every GPU multiplies", N::kGpu, false, label_formats},
      {"wheel", "the torch build for these GPUs and this driver", N::kGpu, false, label_wheel},
      {"bench", "the slowest GPU's stored bench figures", N::kGpu, false, label_bench},
  };
  return kLabelers;
}

const std::vector<Labeler>& gfd_labelers() {
  using N = LabelerNeeds;
  static const std::vector<Labeler> kLabelers = {
      {"machine", "gpu.machine: the DMI product name", N::kGpu, true, gfd_machine},
      {"versions", "cuda.driver(-version).*, cuda.runtime(-version).*", N::kGpu, true, gfd_versions},
      {"mig-capable", "mig.capable", N::kGpu, true, gfd_mig_capable},
      {"sharing", "mps.capable", N::kGpu, true, gfd_sharing},
      {"resources", "gpu.*, mig.strategy and the MIG devices' labels", N::kGpu, true, gfd_resources},
      {"mode", "gpu.mode: the first GPU's PCI class", N::kGpu, true, gfd_mode},
  };
  return kLabelers;
}

NodeLabels run_labelers(const std::vector<Labeler>& table, const LabelContext& c, bool skip_gfd_names,
                        std::vector<std::string>* dropped) {
  bool readable = !gpus_unreadable(c.machine), gpu = readable && !c.gpus.empty();
  NodeLabels out;
  for (const Labeler& l : table) {
    bool runs = l.needs == LabelerNeeds::kNothing || (l.needs == LabelerNeeds::kReadable ? readable : gpu);
    if (!runs || (skip_gfd_names && l.gfd_names)) continue;
    for (auto& [name, value] : l.fn(c, dropped)) out[name] = std::move(value);
  }
  return out;
}

}  // namespace gpuenv

// The node labels as tables of labelers, as decide/rules/rules.h is of rules
// and GFD's internal/lm is of its own: each labeler a small function from
// the machine to some labels, merged in table order, a later one winning a
// name both write. Two tables: gpuenv's labels (under gpuenv.dev/) and GPU
// Feature Discovery's (under nvidia.com/, with GFD's names and meanings:
// `gpuenv labels --namespace nvidia.com`). docs/cluster.md lists both.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "decide/labels/device_plugin_config.h"
#include "decide/node_labels.h"
#include "model/machine.h"

namespace gpuenv {

/// What a labeler sees.
struct LabelContext {
  const Machine& machine;
  std::vector<const Gpu*> gpus;  // those that can serve (not fallen off the bus)
  std::optional<std::string> doctor;  // doctor's verdict, when judged
  /// The device plugin's config (--device-plugin-config); nullptr: none
  /// given, and GFD's labels are those of its default config.
  const DevicePluginConfig* device_plugin = nullptr;
};

/// When a labeler runs.
enum class LabelerNeeds {
  kNothing,   // always
  kReadable,  // the driver answered: not decide/health.h's gpus_unreadable
  kGpu,       // at least one GPU can serve
};

/// A labeler's labels, names without the prefix. A value it cannot vouch
/// for it leaves out, appending "NAME=VALUE: why" to *dropped when given.
using LabelerFn = NodeLabels (*)(const LabelContext&, std::vector<std::string>* dropped);

struct Labeler {
  const char* name;     // short id ("mig")
  const char* summary;  // what it labels, one line
  LabelerNeeds needs;
  /// Its labels carry GFD's names (under gpuenv.dev/): with --namespace
  /// nvidia.com, GFD's own labelers write them instead.
  bool gfd_names;
  LabelerFn fn;
};

/// gpuenv's labels (gpuenv.dev/), in merge order.
const std::vector<Labeler>& gpuenv_labelers();

/// GFD's labels (nvidia.com/), in GFD's merge order (NewDeviceLabeler).
const std::vector<Labeler>& gfd_labelers();

/// The labels of the labelers that `needs` allows on this machine, merged
/// in order; with `skip_gfd_names`, those with gfd_names are left out.
NodeLabels run_labelers(const std::vector<Labeler>& table, const LabelContext& c, bool skip_gfd_names,
                        std::vector<std::string>* dropped);

// gpuenv's labelers (decide/labels/gpuenv_labelers.cc).
NodeLabels label_doctor(const LabelContext&, std::vector<std::string>*);   // doctor
NodeLabels label_count(const LabelContext&, std::vector<std::string>*);    // gpu.count
NodeLabels label_driver(const LabelContext&, std::vector<std::string>*);   // driver.*
NodeLabels label_cuda(const LabelContext&, std::vector<std::string>*);     // cuda.driver.*, cuda.runtime.*
NodeLabels label_gpu(const LabelContext&, std::vector<std::string>*);      // gpu.product, memory, compute, family
NodeLabels label_machine(const LabelContext&, std::vector<std::string>*);  // gpu.machine
NodeLabels label_mig(const LabelContext&, std::vector<std::string>*);      // mig.*, and the MIG devices
NodeLabels label_formats(const LabelContext&, std::vector<std::string>*);  // tf32, bf16, fp8, fp4
NodeLabels label_wheel(const LabelContext&, std::vector<std::string>*);    // torch.wheel, torch.wheel.as-of
NodeLabels label_bench(const LabelContext&, std::vector<std::string>*);    // bench.*

// GFD's labelers (decide/labels/gfd_labelers.cc, gfd_resources.cc).
NodeLabels gfd_machine(const LabelContext&, std::vector<std::string>*);       // gpu.machine
NodeLabels gfd_versions(const LabelContext&, std::vector<std::string>*);      // cuda.driver(-version).*, cuda.runtime(-version).*
NodeLabels gfd_mig_capable(const LabelContext&, std::vector<std::string>*);   // mig.capable
NodeLabels gfd_sharing(const LabelContext&, std::vector<std::string>*);       // mps.capable
NodeLabels gfd_resources(const LabelContext&, std::vector<std::string>*);     // gpu.*, mig.strategy, mig-<profile>.*
NodeLabels gfd_mode(const LabelContext&, std::vector<std::string>*);          // gpu.mode

/// GFD's gpu.family of a compute capability's major (and minor): its own
/// names, "undefined" for a major it does not know.
std::string gfd_family(ComputeCapability cc);

/// GFD's product name: characters outside [A-Za-z0-9-_. ] removed, runs of
/// blanks as one '-' ("NVIDIA A100-SXM4-80GB" -> "NVIDIA-A100-SXM4-80GB").
std::string gfd_sanitise(const std::string& s);

/// The MIG strategy GFD's labels follow: the device plugin config's
/// flags.migStrategy when given, else the one the layout fits (none: no GPU
/// in MIG mode; single: every GPU in MIG mode, each with MIG devices, all of
/// one profile; mixed: anything else).
std::string gfd_mig_strategy(const LabelContext& c);

}  // namespace gpuenv

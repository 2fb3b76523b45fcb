// GPU Feature Discovery's labelers, under its names and with its meanings
// (NVIDIA/k8s-device-plugin, internal/lm: machine-type.go, nvml.go). The
// resources (gpu.*, mig.*) are gfd_resources.cc. docs/cluster.md, "GFD's
// labels", says where gpuenv's differ.
#include <cctype>

#include "decide/labels/labelers.h"
#include "sys/text.h"

namespace gpuenv {

std::string gfd_sanitise(const std::string& s) {
  std::string kept;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ' ') kept += c;
  std::string out;
  for (std::string_view word : split(kept, ' '))
    if (!word.empty()) out += (out.empty() ? "" : "-") + std::string(word);
  return out;
}

// getArchFamily (resource.go), by the major as GFD does: 7.2 is volta, 8.7
// ampere; 10 and 12 blackwell (k8s-device-plugin#1237); 11 "undefined".
std::string gfd_family(ComputeCapability cc) {
  switch (cc.major) {
    case 1: return "tesla";
    case 2: return "fermi";
    case 3: return "kepler";
    case 5: return "maxwell";
    case 6: return "pascal";
    case 7: return cc.minor < 5 ? "volta" : "turing";
    case 8: return cc.minor < 9 ? "ampere" : "ada-lovelace";
    case 9: return "hopper";
    case 10: case 12: return "blackwell";
    default: return "undefined";
  }
}

// machine-type.go: /sys/class/dmi/id/product_name trimmed, spaces as '-';
// "unknown" without it.
NodeLabels gfd_machine(const LabelContext& c, std::vector<std::string>*) {
  std::string name = c.machine.host.product_name.value_or("unknown");
  for (char& ch : name)
    if (ch == ' ') ch = '-';
  return {{"gpu.machine", name}};
}

// nvml.go's newVersionLabeler: the driver's version (X.Y[.Z]) under the
// deprecated cuda.driver.* and the new cuda.driver-version.*, the CUDA
// version it supports under cuda.runtime.* and cuda.runtime-version.*.
NodeLabels gfd_versions(const LabelContext& c, std::vector<std::string>*) {
  const Nvidia& n = c.machine.nvidia;
  NodeLabels l;
  std::vector<std::string_view> v;
  if (n.driver_version) v = split(*n.driver_version, '.');
  if (v.size() == 2 || v.size() == 3) {
    std::string major(v[0]), minor(v[1]), rev(v.size() == 3 ? v[2] : "");
    l["cuda.driver.major"] = l["cuda.driver-version.major"] = major;
    l["cuda.driver.minor"] = l["cuda.driver-version.minor"] = minor;
    l["cuda.driver.rev"] = l["cuda.driver-version.revision"] = rev;
    l["cuda.driver-version.full"] = *n.driver_version;
  }
  if (n.cuda_driver_version) {
    std::string major = std::to_string(*n.cuda_driver_version / 1000);
    std::string minor = std::to_string(*n.cuda_driver_version % 1000 / 10);
    l["cuda.runtime.major"] = l["cuda.runtime-version.major"] = major;
    l["cuda.runtime.minor"] = l["cuda.runtime-version.minor"] = minor;
    l["cuda.runtime-version.full"] = major + "." + minor;
  }
  return l;
}

// Some GPU can run MIG.
NodeLabels gfd_mig_capable(const LabelContext& c, std::vector<std::string>*) {
  bool capable = false;
  for (const Gpu* g : c.gpus) capable = capable || g->mig_enabled.has_value();
  return {{"mig.capable", capable ? "true" : "false"}};
}

// newSharingLabeler: MPS shares the GPUs (the config's strategy), and no GPU
// is in MIG mode (MPS does not share MIG devices).
NodeLabels gfd_sharing(const LabelContext& c, std::vector<std::string>*) {
  bool capable = c.device_plugin && sharing_strategy(*c.device_plugin) == "mps";
  for (const Gpu* g : c.gpus) capable = capable && !g->mig_enabled.value_or(false);
  return {{"mps.capable", capable ? "true" : "false"}};
}

// newGPUModeLabeler: the first GPU's PCI class. "unknown" for any other
// class, and here also when sysfs could not be read (GFD fails then).
NodeLabels gfd_mode(const LabelContext& c, std::vector<std::string>*) {
  std::string klass = c.gpus.front()->pci_class.value_or("");
  return {{"gpu.mode", klass == "0x030000" ? "graphics" : klass == "0x030200" ? "compute" : "unknown"}};
}

}  // namespace gpuenv

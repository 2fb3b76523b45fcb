// gpuenv's labelers: the labels under gpuenv.dev/ (docs/cluster.md, "Node
// labels"). Those with GFD's names mean what GFD's mean.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "decide/labels/labelers.h"
#include "decide/wheels.h"
#include "model/hardware/arch_table.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

// "NVIDIA A100-SXM4-80GB MIG 2g.20gb" -> "2g.20gb".
std::string mig_profile(const MigDevice& d) {
  std::string name = d.name.value_or("");
  std::size_t at = name.rfind(" MIG ");
  return at == std::string::npos ? "" : name.substr(at + 5);
}

std::string mib(const std::optional<std::uint64_t>& bytes) { return bytes ? std::to_string(*bytes >> 20) : ""; }

// The GPUs' compute capabilities, or nullopt when one is unknown.
std::optional<std::vector<ComputeCapability>> all_ccs(const LabelContext& c) {
  std::vector<ComputeCapability> ccs;
  for (const Gpu* g : c.gpus) {
    if (!g->compute_capability) return std::nullopt;
    ccs.push_back(*g->compute_capability);
  }
  return ccs;
}

// GFD's labels of the MIG devices. single: gpu.product gains "-MIG-" and the
// profile, gpu.count counts MIG devices, gpu.memory is one's. mixed:
// mig-<profile>.count and mig-<profile>.memory for each profile.
void mig_device_labels(const std::vector<const Gpu*>& gpus, bool single, NodeLabels* l) {
  std::map<std::string, std::pair<int, std::string>> profiles;  // profile -> count, MiB
  for (const Gpu* g : gpus)
    for (const MigDevice& d : g->mig_devices) {
      auto& [count, memory] = profiles[mig_profile(d)];
      ++count;
      memory = mib(d.memory_total_bytes);
    }
  profiles.erase("");
  if (single && profiles.size() == 1) {
    const auto& [profile, seen] = *profiles.begin();
    const Gpu& first = *gpus.front();
    (*l)["gpu.product"] = label_value((first.name ? label_value(*first.name) : "") + "-MIG-" + profile);
    (*l)["gpu.count"] = std::to_string(seen.first);
    (*l)["gpu.memory"] = seen.second;
    return;
  }
  for (const auto& [profile, seen] : profiles) {
    (*l)["mig-" + label_value(profile) + ".count"] = std::to_string(seen.first);
    (*l)["mig-" + label_value(profile) + ".memory"] = seen.second;
  }
}

int size_of(const std::string& key) {
  int n = 0;
  std::from_chars(key.data() + key.rfind('_') + 1, key.data() + key.size(), n);
  return n;
}

// One GPU's figure: the ok measurement of `prefix` (exact key, or the
// largest size of "gemm_bf16_*") for its UUID.
std::optional<double> figure(const Machine& m, const Gpu& g, const std::string& prefix) {
  const Measurement* best = nullptr;
  for (const Measurement& x : m.measurements) {
    if (!x.ok() || !x.value || x.gpu_uuid != g.uuid.value_or("") || x.key.rfind(prefix, 0) != 0) continue;
    if (!best || size_of(x.key) > size_of(best->key)) best = &x;
  }
  return best ? best->value : std::nullopt;
}

// A finite figure rounded to an integer, without lround's overflow: "-5" and
// "-9223372036854775808" as they are, for the validity check to judge.
std::string figure_text(double v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.0f", std::round(v));
  return buf;
}

// The slowest GPU's figure, rounded to an integer (node affinity's Gt and
// Lt compare integers); left out unless every GPU was measured.
void measured_label(const LabelContext& c, const std::string& key, const std::string& name, NodeLabels* l,
                    std::vector<std::string>* dropped) {
  std::optional<double> least;
  for (const Gpu* g : c.gpus) {
    std::optional<double> v = figure(c.machine, *g, key);
    if (!v) return;
    least = least ? std::min(*least, *v) : *v;
  }
  if (least && !std::isfinite(*least)) {
    if (dropped) dropped->push_back(name + "=" + (std::isnan(*least) ? "nan" : "inf") +
                                    ": not a finite figure, so the label is left out");
    return;
  }
  if (least) (*l)[name] = figure_text(*least);
}

// "580.95.05" -> {"580", "95", "05"}: the label value of each part there is.
std::vector<std::string> driver_parts(const Nvidia& n) {
  std::vector<std::string> parts;
  if (!n.driver_version) return parts;
  const std::string& v = *n.driver_version;
  for (std::size_t i = 0, start = 0; i < 3 && start <= v.size(); ++i) {
    std::size_t dot = std::min(v.find('.', start), v.size());
    parts.push_back(label_value(v.substr(start, dot - start)));
    start = dot + 1;
  }
  return parts;
}

NodeLabels driver_named(const Nvidia& n, const std::string& prefix) {
  static const char* kNames[] = {"major", "minor", "rev"};
  NodeLabels l;
  std::vector<std::string> parts = driver_parts(n);
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!parts[i].empty()) l[prefix + kNames[i]] = parts[i];
  return l;
}

}  // namespace

NodeLabels label_doctor(const LabelContext& c, std::vector<std::string>*) {
  if (!c.doctor) return {};
  return {{"doctor", label_value(*c.doctor)}};
}

NodeLabels label_count(const LabelContext& c, std::vector<std::string>*) {
  return {{"gpu.count", std::to_string(c.gpus.size())}};
}

// "580.95.05" -> driver.major=580, driver.minor=95, driver.rev=05.
NodeLabels label_driver(const LabelContext& c, std::vector<std::string>*) {
  return driver_named(c.machine.nvidia, "driver.");
}

// GFD's meanings: cuda.driver.* is the driver's version; the CUDA version the
// driver supports (13000) is cuda.runtime.major=13, cuda.runtime.minor=0.
NodeLabels label_cuda(const LabelContext& c, std::vector<std::string>*) {
  NodeLabels l = driver_named(c.machine.nvidia, "cuda.driver.");
  if (std::optional<int> v = c.machine.nvidia.cuda_driver_version) {
    l["cuda.runtime.major"] = std::to_string(*v / 1000);
    l["cuda.runtime.minor"] = std::to_string(*v % 1000 / 10);
  }
  return l;
}

// The first GPU's.
NodeLabels label_gpu(const LabelContext& c, std::vector<std::string>*) {
  const Gpu& g = *c.gpus.front();
  NodeLabels l;
  if (g.name) l["gpu.product"] = label_value(*g.name);
  if (g.memory_total_bytes) l["gpu.memory"] = std::to_string(*g.memory_total_bytes >> 20);
  if (!g.compute_capability) return l;
  ComputeCapability cc = *g.compute_capability;
  l["gpu.compute.major"] = std::to_string(cc.major);
  l["gpu.compute.minor"] = std::to_string(cc.minor);
  const ArchInfo* a = arch_info(cc);
  l["gpu.family"] = a ? label_value(ascii_lower(a->family)) : "unknown";
  return l;
}

// GFD's: the DMI product name, spaces as dashes; "unknown" without one.
NodeLabels label_machine(const LabelContext& c, std::vector<std::string>*) {
  const std::optional<std::string>& name = c.machine.host.product_name;
  return {{"gpu.machine", name ? label_value(*name) : "unknown"}};
}

// capable: some GPU can run MIG. strategy: none (no GPU in MIG mode), single
// (every GPU in MIG mode, one profile), mixed (anything else).
NodeLabels label_mig(const LabelContext& c, std::vector<std::string>*) {
  bool capable = false, all = true, any = false;
  std::vector<std::string> profiles;
  for (const Gpu* g : c.gpus) {
    capable = capable || g->mig_enabled.has_value();
    bool on = g->mig_enabled.value_or(false);
    any = any || on;
    all = all && on;
    for (const MigDevice& d : g->mig_devices) profiles.push_back(d.name.value_or(""));
  }
  std::sort(profiles.begin(), profiles.end());
  bool one_profile = std::unique(profiles.begin(), profiles.end()) - profiles.begin() <= 1;
  NodeLabels l;
  l["mig.capable"] = capable ? "true" : "false";
  l["mig.strategy"] = !any ? "none" : all && one_profile ? "single" : "mixed";
  if (any) mig_device_labels(c.gpus, all && one_profile, &l);
  return l;
}

// A format is "true" only when every GPU's tensor cores multiply it; left
// out when a GPU's capability is unknown to gpuenv.
NodeLabels label_formats(const LabelContext& c, std::vector<std::string>*) {
  std::optional<std::vector<ComputeCapability>> ccs = all_ccs(c);
  if (!ccs) return {};
  TensorFormats all{true, true, true, true, true};
  for (ComputeCapability cc : *ccs) {
    std::optional<TensorFormats> t = tensor_formats(cc);
    if (!t) return {};
    all = {all.fp16 && t->fp16, all.bf16 && t->bf16, all.tf32 && t->tf32, all.fp8 && t->fp8,
           all.fp4 && t->fp4};
  }
  auto b = [](bool v) { return v ? "true" : "false"; };
  return {{"tf32", b(all.tf32)}, {"bf16", b(all.bf16)}, {"fp8", b(all.fp8)}, {"fp4", b(all.fp4)}};
}

// choose_wheel's node-wide answer (doctor's fixes ask it too), "none" when
// no build runs on this driver; and the date of the table it comes from.
NodeLabels label_wheel(const LabelContext& c, std::vector<std::string>*) {
  std::optional<std::vector<ComputeCapability>> ccs = all_ccs(c);
  if (!ccs) return {};
  WheelChoice w = choose_wheel(*ccs, c.machine.nvidia);
  bool runs = w.build && !w.driver_first;
  return {{"torch.wheel", runs ? label_value(w.version + "-" + w.build->variant) : "none"},
          {"torch.wheel.as-of", wheel_table_end().date}};
}

NodeLabels label_bench(const LabelContext& c, std::vector<std::string>* dropped) {
  NodeLabels l;
  measured_label(c, "gemm_bf16_", "bench.bf16-tflops", &l, dropped);
  measured_label(c, "h2d_pinned", "bench.h2d-gbps", &l, dropped);
  return l;
}

}  // namespace gpuenv

#include "decide/node_labels.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include "decide/health.h"
#include "model/hardware/arch_table.h"
#include "sys/text.h"
#include "decide/wheels.h"

namespace gpuenv {
namespace {

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool value_char(char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; }

// The GPUs a pod can be given: not the ones that fell off the bus.
std::vector<const Gpu*> serving(const Machine& m) {
  std::vector<const Gpu*> out;
  for (const Gpu& g : m.gpus)
    if (!g.problem) out.push_back(&g);
  return out;
}

void gpu_labels(const Gpu& g, NodeLabels* l) {
  if (g.name) (*l)["gpu.product"] = label_value(*g.name);
  if (g.memory_total_bytes) (*l)["gpu.memory"] = std::to_string(*g.memory_total_bytes >> 20);
  if (!g.compute_capability) return;
  ComputeCapability cc = *g.compute_capability;
  (*l)["gpu.compute.major"] = std::to_string(cc.major);
  (*l)["gpu.compute.minor"] = std::to_string(cc.minor);
  const ArchInfo* a = arch_info(cc);
  (*l)["gpu.family"] = a ? label_value(ascii_lower(a->family)) : "unknown";
}

// "580.95.05" -> driver.major=580, driver.minor=95, driver.rev=05, and the
// same under GFD's names for the driver's version: cuda.driver.major/minor/rev.
// The CUDA version the driver supports (13000) is GFD's cuda.runtime.major=13,
// cuda.runtime.minor=0.
void driver_labels(const Nvidia& n, NodeLabels* l) {
  if (n.driver_version) {
    const char* names[] = {"major", "minor", "rev"};
    std::string v = *n.driver_version;
    for (std::size_t i = 0, start = 0; i < 3 && start <= v.size(); ++i) {
      std::size_t dot = std::min(v.find('.', start), v.size());
      std::string part = label_value(v.substr(start, dot - start));
      if (!part.empty()) (*l)[std::string("driver.") + names[i]] = (*l)[std::string("cuda.driver.") + names[i]] = part;
      start = dot + 1;
    }
  }
  if (n.cuda_driver_version) {
    (*l)["cuda.runtime.major"] = std::to_string(*n.cuda_driver_version / 1000);
    (*l)["cuda.runtime.minor"] = std::to_string(*n.cuda_driver_version % 1000 / 10);
  }
}

// "NVIDIA A100-SXM4-80GB MIG 2g.20gb" -> "2g.20gb".
std::string mig_profile(const MigDevice& d) {
  std::string name = d.name.value_or("");
  std::size_t at = name.rfind(" MIG ");
  return at == std::string::npos ? "" : name.substr(at + 5);
}

std::string mib(const std::optional<std::uint64_t>& bytes) { return bytes ? std::to_string(*bytes >> 20) : ""; }

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
    (*l)["gpu.product"] = label_value((*l)["gpu.product"] + "-MIG-" + profile);
    (*l)["gpu.count"] = std::to_string(seen.first);
    (*l)["gpu.memory"] = seen.second;
    return;
  }
  for (const auto& [profile, seen] : profiles) {
    (*l)["mig-" + label_value(profile) + ".count"] = std::to_string(seen.first);
    (*l)["mig-" + label_value(profile) + ".memory"] = seen.second;
  }
}

// capable: some GPU can run MIG. strategy: none (no GPU in MIG mode), single
// (every GPU in MIG mode, one profile), mixed (anything else).
void mig_labels(const std::vector<const Gpu*>& gpus, NodeLabels* l) {
  bool capable = false, all = !gpus.empty(), any = false;
  std::vector<std::string> profiles;
  for (const Gpu* g : gpus) {
    capable = capable || g->mig_enabled.has_value();
    bool on = g->mig_enabled.value_or(false);
    any = any || on;
    all = all && on;
    for (const MigDevice& d : g->mig_devices) profiles.push_back(d.name.value_or(""));
  }
  std::sort(profiles.begin(), profiles.end());
  bool one_profile = std::unique(profiles.begin(), profiles.end()) - profiles.begin() <= 1;
  (*l)["mig.capable"] = capable ? "true" : "false";
  (*l)["mig.strategy"] = !any ? "none" : all && one_profile ? "single" : "mixed";
  if (any) mig_device_labels(gpus, all && one_profile, l);
}

// A format is "true" only when every GPU's tensor cores multiply it; left
// out when a GPU's capability is unknown to gpuenv.
void format_labels(const std::vector<ComputeCapability>& ccs, NodeLabels* l) {
  TensorFormats all{true, true, true, true, true};
  for (ComputeCapability cc : ccs) {
    std::optional<TensorFormats> t = tensor_formats(cc);
    if (!t) return;
    all = {all.fp16 && t->fp16, all.bf16 && t->bf16, all.tf32 && t->tf32, all.fp8 && t->fp8,
           all.fp4 && t->fp4};
  }
  auto b = [](bool v) { return v ? "true" : "false"; };
  (*l)["tf32"] = b(all.tf32);
  (*l)["bf16"] = b(all.bf16);
  (*l)["fp8"] = b(all.fp8);
  (*l)["fp4"] = b(all.fp4);
}

// choose_wheel's node-wide answer (doctor's fixes ask it too), "none" when
// no build runs on this driver; and the date of the table it comes from.
void wheel_label(const Machine& m, const std::vector<ComputeCapability>& ccs, NodeLabels* l) {
  WheelChoice c = choose_wheel(ccs, m.nvidia);
  bool runs = c.build && !c.driver_first;
  (*l)["torch.wheel"] = runs ? label_value(c.version + "-" + c.build->variant) : "none";
  (*l)["torch.wheel.as-of"] = wheel_table_end().date;
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
// "-9223372036854775808" as they are, for keep_valid to judge.
std::string figure_text(double v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.0f", std::round(v));
  return buf;
}

// The slowest GPU's figure, rounded to an integer (node affinity's Gt and
// Lt compare integers); left out unless every GPU was measured.
void measured_label(const Machine& m, const std::vector<const Gpu*>& gpus, const std::string& key,
                    const std::string& name, NodeLabels* l, std::vector<std::string>* dropped) {
  std::optional<double> least;
  for (const Gpu* g : gpus) {
    std::optional<double> v = figure(m, *g, key);
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

// Leaves out every value Kubernetes would refuse, saying which.
void keep_valid(NodeLabels* l, std::vector<std::string>* dropped) {
  for (auto it = l->begin(); it != l->end();) {
    if (valid_label_value(it->second)) {
      ++it;
      continue;
    }
    if (dropped)
      dropped->push_back(it->first + "=" + it->second +
                         ": not a Kubernetes label value (at most 63 of [-._A-Za-z0-9], a letter or digit at "
                         "each end), so the label is left out");
    it = l->erase(it);
  }
}

}  // namespace

std::string label_value(const std::string& s) {
  std::string out;
  for (char c : s) out += value_char(c) ? c : '-';
  if (out.size() > 63) out.resize(63);
  std::size_t first = 0;
  while (first < out.size() && !alnum(out[first])) ++first;
  out.erase(0, first);
  while (!out.empty() && !alnum(out.back())) out.pop_back();
  return out;
}

bool valid_label_value(const std::string& s) {
  if (s.empty()) return true;
  return s.size() <= 63 && alnum(s.front()) && alnum(s.back()) &&
         std::all_of(s.begin(), s.end(), value_char);
}

NodeLabels node_labels(const Machine& m, const std::optional<std::string>& doctor,
                   std::vector<std::string>* dropped) {
  NodeLabels l;
  if (doctor) l["doctor"] = label_value(*doctor);
  if (gpus_unreadable(m)) return l;  // no count rather than a false 0, and no driver the module may not be
  std::vector<const Gpu*> gpus = serving(m);
  l["gpu.count"] = std::to_string(gpus.size());
  driver_labels(m.nvidia, &l);
  if (gpus.empty()) return keep_valid(&l, dropped), l;
  gpu_labels(*gpus.front(), &l);
  // GFD's: the DMI product name, spaces as dashes; "unknown" without one.
  l["gpu.machine"] = m.host.product_name ? label_value(*m.host.product_name) : "unknown";
  mig_labels(gpus, &l);
  std::vector<ComputeCapability> ccs;
  for (const Gpu* g : gpus)
    if (g->compute_capability) ccs.push_back(*g->compute_capability);
  if (ccs.size() == gpus.size()) {
    format_labels(ccs, &l);
    wheel_label(m, ccs, &l);
  }
  measured_label(m, gpus, "gemm_bf16_", "bench.bf16-tflops", &l, dropped);
  measured_label(m, gpus, "h2d_pinned", "bench.h2d-gbps", &l, dropped);
  keep_valid(&l, dropped);
  return l;
}

std::string feature_file(const NodeLabels& labels, const std::string& expiry) {
  std::string out =
      "# Written by gpuenv labels for Node Feature Discovery's local source.\n"
      "# +expiry-time=" + expiry + "\n";
  for (const auto& [name, value] : labels) out += kLabelPrefix + name + "=" + value + "\n";
  return out;
}

}  // namespace gpuenv

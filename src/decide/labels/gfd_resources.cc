// GFD's resource labels (internal/lm: resource.go, mig-strategy.go): the GPUs
// (gpu.product, count, replicas, sharing-strategy, memory, family, compute)
// and, by MIG strategy, the MIG devices (single: under gpu.*; mixed: under
// mig-<profile>.*) with their share of the GPU (multiprocessors, slices,
// engines). With several GPU models GFD describes one of them, a different
// one from round to round (Go's map order; k8s-device-plugin#731, #736);
// gpuenv always the first GPU's that is not in MIG mode, else the first's.
#include <algorithm>
#include <map>

#include "decide/labels/labelers.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

constexpr std::size_t kMaxValue = 63;  // a Kubernetes label value

// "NVIDIA A100-SXM4-80GB MIG 1g.10gb+me" -> "1g.10gb.me", as GFD names the
// MIG device's profile ('+' as '.').
std::string gfd_profile(const MigDevice& d) {
  std::string name = d.name.value_or("");
  std::size_t at = name.rfind(" MIG ");
  std::string p = at == std::string::npos ? "" : name.substr(at + 5);
  std::replace(p.begin(), p.end(), '+', '.');
  return p;
}

bool separator(char c) { return c == '-' || c == '.' || c == '_'; }

// getProductName: the sanitised parts joined by '-', "-SHARED" when shared
// and not renamed; past 63 characters the model is cut, and what follows it
// kept, with no separator left at the cut.
std::string product_name(const std::vector<std::string>& parts, bool shared) {
  std::vector<std::string> kept;
  for (const std::string& p : parts)
    if (!p.empty()) kept.push_back(gfd_sanitise(p));
  if (kept.empty()) return "";
  std::string model = kept.front(), rest;
  for (std::size_t i = 1; i < kept.size(); ++i) rest += "-" + kept[i];
  if (shared) rest += "-SHARED";
  if (model.size() + rest.size() > kMaxValue) {
    model.resize(kMaxValue - std::min(rest.size(), kMaxValue));
    while (!model.empty() && separator(model.back())) model.pop_back();
  }
  return model + rest;
}

// resourceLabeler: one resource's labels, "gpu.*" or "mig-1g.10gb.*".
struct Resource {
  std::string name;  // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"
  const DevicePluginConfig* sharing;  // nullptr: sharing off (GPUs in MIG mode)

  std::string key(const std::string& suffix) const { return name.substr(std::string(kGfdLabelPrefix).size()) + "." + suffix; }
  const ReplicatedResource* replication() const { return sharing ? replication_of(*sharing, name) : nullptr; }
  int replicas() const {
    if (!sharing) return 0;
    const ReplicatedResource* r = replication();
    return r && r->replicas > 0 ? r->replicas : 1;
  }
  bool shared() const { return replication() && replication()->replicas > 1; }
  bool renamed() const { return replication() && !replication()->rename.empty(); }

  // baseLabeler: product, count, replicas, sharing-strategy.
  NodeLabels base(int count, const std::vector<std::string>& parts) const {
    int n = replicas();
    return {{key("product"), product_name(parts, shared() && !renamed())},
            {key("count"), std::to_string(count)},
            {key("replicas"), std::to_string(n)},
            {key("sharing-strategy"), sharing && n > 1 ? sharing_strategy(*sharing) : "none"}};
  }
};

void merge(NodeLabels* into, const NodeLabels& from) {
  for (const auto& [k, v] : from) (*into)[k] = v;
}

// NewGPUResourceLabeler: a full GPU model's labels.
NodeLabels full_gpu(const Resource& r, const Gpu& g, int count) {
  NodeLabels l = r.base(count, {g.name.value_or("")});
  if (g.memory_total_bytes && *g.memory_total_bytes >> 20) l[r.key("memory")] = std::to_string(*g.memory_total_bytes >> 20);
  if (g.compute_capability && g.compute_capability->major != 0) {
    l[r.key("family")] = gfd_family(*g.compute_capability);
    l[r.key("compute.major")] = std::to_string(g.compute_capability->major);
    l[r.key("compute.minor")] = std::to_string(g.compute_capability->minor);
  }
  return l;
}

// NewMIGResourceLabeler: a MIG profile's labels, its attributes included.
NodeLabels mig_resource(const Resource& r, const Gpu& parent, const MigDevice& d, int count) {
  NodeLabels l = r.base(count, {parent.name.value_or(""), "MIG", gfd_profile(d)});
  if (!d.attributes) {
    if (d.memory_total_bytes) l[r.key("memory")] = std::to_string(*d.memory_total_bytes >> 20);
    return l;
  }
  const MigAttributes& a = *d.attributes;
  l[r.key("memory")] = std::to_string(a.memory_mib);
  l[r.key("multiprocessors")] = std::to_string(a.multiprocessors);
  l[r.key("slices.gi")] = std::to_string(a.gpu_instance_slices);
  l[r.key("slices.ci")] = std::to_string(a.compute_instance_slices);
  l[r.key("engines.copy")] = std::to_string(a.copy_engines);
  l[r.key("engines.decoder")] = std::to_string(a.decoders);
  l[r.key("engines.encoder")] = std::to_string(a.encoders);
  l[r.key("engines.jpeg")] = std::to_string(a.jpeg_decoders);
  l[r.key("engines.ofa")] = std::to_string(a.ofas);
  return l;
}

const DevicePluginConfig& config_of(const LabelContext& c) {
  static const DevicePluginConfig kDefault;  // GFD's when no file is given: no sharing
  return c.device_plugin ? *c.device_plugin : kDefault;
}

bool in_mig_mode(const Gpu* g) { return g->mig_enabled.value_or(false); }

// newGPULabelers: the described model's labels; its count is every GPU of
// that name. A model only in MIG mode is not shared (replicas 0).
NodeLabels full_gpus(const LabelContext& c) {
  auto full = std::find_if(c.gpus.begin(), c.gpus.end(), [](const Gpu* g) { return !in_mig_mode(g); });
  const Gpu& g = full != c.gpus.end() ? **full : *c.gpus.front();
  int count = static_cast<int>(std::count_if(c.gpus.begin(), c.gpus.end(),
                                             [&](const Gpu* o) { return o->name == g.name; }));
  Resource r{"nvidia.com/gpu", in_mig_mode(&g) ? nullptr : &config_of(c)};
  return full_gpu(r, g, count);
}

struct Profile {
  const Gpu* parent = nullptr;
  const MigDevice* device = nullptr;
  int count = 0;
};

// The MIG devices by profile, each with its first device.
std::map<std::string, Profile> profiles(const LabelContext& c) {
  std::map<std::string, Profile> out;
  for (const Gpu* g : c.gpus)
    for (const MigDevice& d : g->mig_devices) {
      Profile& p = out[gfd_profile(d)];
      if (!p.device) p.parent = g, p.device = &d;
      ++p.count;
    }
  return out;
}

// newInvalidMigStrategyLabeler: single, but the layout does not fit it.
NodeLabels invalid_single(const Gpu& mig_gpu) {
  return {{"gpu.product", product_name({mig_gpu.name.value_or(""), "MIG", "INVALID"}, false)},
          {"gpu.count", "0"},
          {"gpu.replicas", "0"},
          {"gpu.memory", "0"}};
}

// newMigStrategySingleLabeler: every GPU in MIG mode, none empty, one profile.
NodeLabels single(const LabelContext& c) {
  auto first_mig = std::find_if(c.gpus.begin(), c.gpus.end(), in_mig_mode);
  if (first_mig == c.gpus.end()) return {};
  bool empty = std::any_of(c.gpus.begin(), c.gpus.end(),
                           [](const Gpu* g) { return in_mig_mode(g) && g->mig_devices.empty(); });
  bool full = std::any_of(c.gpus.begin(), c.gpus.end(), [](const Gpu* g) { return !in_mig_mode(g); });
  std::map<std::string, Profile> ps = profiles(c);
  if (empty || full || ps.size() != 1) return invalid_single(**first_mig);
  const Profile& p = ps.begin()->second;
  return mig_resource({"nvidia.com/gpu", &config_of(c)}, *p.parent, *p.device, p.count);
}

// newMigStrategyMixedLabeler: each profile under its own resource.
NodeLabels mixed(const LabelContext& c) {
  NodeLabels l;
  for (const auto& [name, p] : profiles(c))
    merge(&l, mig_resource({"nvidia.com/mig-" + name, &config_of(c)}, *p.parent, *p.device, p.count));
  return l;
}

}  // namespace

std::string gfd_mig_strategy(const LabelContext& c) {
  if (c.device_plugin && c.device_plugin->mig_strategy) return *c.device_plugin->mig_strategy;
  bool any = false, all = true, empty = false;
  for (const Gpu* g : c.gpus) {
    any = any || in_mig_mode(g);
    all = all && in_mig_mode(g);
    empty = empty || (in_mig_mode(g) && g->mig_devices.empty());
  }
  if (!any) return "none";
  return all && !empty && profiles(c).size() == 1 ? "single" : "mixed";
}

// NewResourceLabeler: the GPUs' labels, then the MIG strategy's over them.
NodeLabels gfd_resources(const LabelContext& c, std::vector<std::string>*) {
  NodeLabels l = full_gpus(c);
  std::string strategy = gfd_mig_strategy(c);
  if (strategy == "none") return l;
  l["mig.strategy"] = strategy;
  merge(&l, strategy == "single" ? single(c) : mixed(c));
  return l;
}

}  // namespace gpuenv

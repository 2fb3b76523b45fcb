#include "decide/visible.h"

#include <algorithm>

namespace gpuenv {
namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// What CUDA enumerates with no CUDA_VISIBLE_DEVICES: every GPU not in MIG
// mode, and the MIG devices of those that are, in NVML order.
std::vector<VisibleDevice> default_devices(const Machine& m) {
  std::vector<VisibleDevice> out;
  for (const auto& g : m.gpus) {
    if (g.problem) continue;  // a lost GPU is not enumerated
    if (g.mig_enabled.value_or(false)) {
      for (const auto& d : g.mig_devices) out.push_back({&g, &d});
    } else {
      out.push_back({&g, nullptr});
    }
  }
  return out;
}

struct Lookup {
  std::optional<VisibleDevice> device;
  std::string error;
};

Lookup by_ordinal(const std::vector<VisibleDevice>& all, const std::string& tok) {
  if (tok.empty() || tok.size() > 6 || tok.find_first_not_of("0123456789") != std::string::npos)
    return {std::nullopt, "\"" + tok + "\" is neither a device index nor a GPU-/MIG- UUID"};
  size_t i = std::stoul(tok);
  if (i >= all.size())
    return {std::nullopt, "device index " + tok + " does not exist (" + std::to_string(all.size()) +
                              " device(s) present)"};
  return {all[i], ""};
}

// UUIDs may be given as any unique prefix, as CUDA accepts.
Lookup by_uuid(const Machine& m, const std::string& tok) {
  std::vector<VisibleDevice> hits;
  for (const auto& g : m.gpus) {
    if (starts_with(tok, "GPU-") && g.uuid && starts_with(*g.uuid, tok) && !g.problem)
      hits.push_back({&g, nullptr});
    for (const auto& d : g.mig_devices)
      if (starts_with(tok, "MIG-") && starts_with(d.uuid, tok)) hits.push_back({&g, &d});
  }
  if (hits.size() == 1) return {hits[0], ""};
  if (hits.empty()) return {std::nullopt, "no device has the UUID " + tok};
  return {std::nullopt, "the UUID prefix " + tok + " matches " + std::to_string(hits.size()) +
                            " devices; give more of it"};
}

bool same(const VisibleDevice& a, const VisibleDevice& b) {
  return a.gpu == b.gpu && a.mig == b.mig;
}

}  // namespace

ComputeCapability VisibleDevice::cc() const {
  return cc_known() ? *gpu->compute_capability : ComputeCapability{};
}

Visibility visible_devices(const Machine& m, const std::string* cvd) {
  Visibility v;
  std::vector<VisibleDevice> all = default_devices(m);
  if (!cvd) {
    v.devices = std::move(all);
    return v;
  }
  v.restricted = true;
  for (const std::string& raw : split_commas(*cvd)) {
    std::string tok = trim(raw);
    if (tok.empty() && cvd->find_first_not_of(" \t") == std::string::npos) break;  // "": none
    Lookup hit = (starts_with(tok, "GPU-") || starts_with(tok, "MIG-")) ? by_uuid(m, tok)
                                                                       : by_ordinal(all, tok);
    if (hit.device && std::any_of(v.devices.begin(), v.devices.end(),
                                  [&](const VisibleDevice& d) { return same(d, *hit.device); }))
      hit = {std::nullopt, "device " + tok + " is listed twice"};
    if (!hit.device) {
      // CUDA stops at the first entry it cannot use; later ones are ignored.
      if (tok != "-1" && tok != "NoDevFiles")
        v.problem = "CUDA_VISIBLE_DEVICES=" + *cvd + ": " + hit.error +
                    "; CUDA ignores this entry and every one after it";
      break;
    }
    v.devices.push_back(*hit.device);
  }
  return v;
}

Visibility visible_devices(const Machine& m, const Options& o) {
  return visible_devices(m, o.getenv("CUDA_VISIBLE_DEVICES"));
}

std::vector<const Gpu*> visible_gpus(const Visibility& v) {
  std::vector<const Gpu*> out;
  for (const auto& d : v.devices)
    if (std::find(out.begin(), out.end(), d.gpu) == out.end()) out.push_back(d.gpu);
  return out;
}

}  // namespace gpuenv

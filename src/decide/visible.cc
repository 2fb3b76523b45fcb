#include "decide/visible.h"

#include <algorithm>
#include <set>
#include <unordered_set>
#include <utility>

#include "sys/text.h"

namespace gpuenv {
namespace {

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
  std::string error;    // why the entry ends the list
  bool quiet = false;   // an intended end ("-1"), not a problem
  std::string warning;  // the entry was used, but not as written
};

Lookup found(VisibleDevice d) { return {d, "", false, ""}; }
Lookup fail(std::string error, bool quiet = false) { return {std::nullopt, std::move(error), quiet, ""}; }

// The driver reads an ordinal like strtol: a sign, then digits; whatever
// follows the digits is ignored ("1gpu" is 1). A negative one ends the list.
Lookup by_ordinal(const std::vector<VisibleDevice>& all, const std::string& tok) {
  if (tok == "NoDevFiles") return fail(tok, true);  // what Slurm sets for a job without GPUs
  size_t first = !tok.empty() && (tok[0] == '+' || tok[0] == '-') ? 1 : 0;
  size_t end = std::min(tok.find_first_not_of("0123456789", first), tok.size());
  if (end == first) return fail("\"" + tok + "\" is neither a device index nor a GPU-/MIG- UUID");
  std::string digits = tok.substr(first, end - first);
  bool zero = digits.find_first_not_of('0') == std::string::npos;
  // "-1" is the usual way to hide every GPU
  if (tok[0] == '-' && !zero) return fail("the negative index " + tok + " ends the list", tok == "-1");
  size_t i = digits.size() > 6 ? all.size() : std::stoul(digits);
  if (i >= all.size())
    return fail("device index " + digits + " does not exist (" + std::to_string(all.size()) +
                " device(s) present)");
  Lookup l = found(all[i]);
  if (end != tok.size() || first != 0) l.warning = "\"" + tok + "\" is read as index " + digits;
  return l;
}

// CUDA 11's MIG-GPU-<gpu uuid>/<gpu instance>/<compute instance> form.
Lookup by_legacy_mig(const Machine& m, const std::string& tok) {
  std::vector<std::string_view> parts = split(std::string_view(tok).substr(4), '/');
  if (parts.size() != 3) return fail("no device has the UUID " + tok);
  for (const auto& g : m.gpus) {
    if (g.problem || g.uuid != parts[0]) continue;
    for (const auto& d : g.mig_devices)
      if (d.gpu_instance_id && d.compute_instance_id && std::to_string(*d.gpu_instance_id) == parts[1] &&
          std::to_string(*d.compute_instance_id) == parts[2])
        return found({&g, &d});
  }
  return fail("no MIG device matches " + tok);
}

// UUIDs may be given as any unique prefix, as CUDA accepts.
Lookup by_uuid(const Machine& m, const std::string& tok) {
  if (starts_with(tok, "MIG-GPU-")) return by_legacy_mig(m, tok);
  std::vector<VisibleDevice> hits;
  for (const auto& g : m.gpus) {
    if (g.problem) continue;
    if (starts_with(tok, "GPU-") && g.uuid && starts_with(*g.uuid, tok)) hits.push_back({&g, nullptr});
    for (const auto& d : g.mig_devices)
      if (starts_with(tok, "MIG-") && starts_with(d.uuid, tok)) hits.push_back({&g, &d});
  }
  if (hits.size() == 1) return found(hits[0]);
  if (hits.empty()) return fail("no device has the UUID " + tok);
  return fail("the UUID prefix " + tok + " matches " + std::to_string(hits.size()) +
              " devices; give more of it");
}

Lookup lookup(const Machine& m, const std::vector<VisibleDevice>& all, const std::string& tok) {
  return starts_with(tok, "GPU-") || starts_with(tok, "MIG-") ? by_uuid(m, tok) : by_ordinal(all, tok);
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
  if (trim(*cvd, " \t").empty()) return v;  // "": no device at all
  auto problem = [&](const std::string& what) { v.problem = "CUDA_VISIBLE_DEVICES=" + *cvd + ": " + what; };
  std::set<std::pair<const Gpu*, const MigDevice*>> listed;
  for (std::string_view raw : split(*cvd, ',')) {
    std::string tok(trim(raw, " \t"));
    Lookup hit = lookup(m, all, tok);
    if (hit.device && !listed.insert({hit.device->gpu, hit.device->mig}).second) {
      // A repeated device makes the driver drop the whole list.
      v.devices.clear();
      problem("device " + tok + " is listed twice, which makes CUDA hide every device");
      return v;
    }
    if (!hit.device) {
      // CUDA stops at the first entry it cannot use; later ones are ignored.
      if (!hit.quiet) problem(hit.error + "; CUDA ignores this entry and every one after it");
      return v;
    }
    if (!hit.warning.empty() && !v.problem) problem(hit.warning);
    v.devices.push_back(*hit.device);
  }
  return v;
}

Visibility visible_devices(const Machine& m, const Options& o) {
  return visible_devices(m, o.getenv("CUDA_VISIBLE_DEVICES"));
}

std::vector<const Gpu*> visible_gpus(const Visibility& v) {
  std::vector<const Gpu*> out;
  std::unordered_set<const Gpu*> seen;
  for (const auto& d : v.devices)
    if (seen.insert(d.gpu).second) out.push_back(d.gpu);
  return out;
}

int enumerated_devices(const Visibility& v) {
  int whole = 0;
  for (const auto& d : v.devices) whole += d.mig ? 0 : 1;
  return whole + (any_mig(v) ? 1 : 0);
}

bool any_mig(const Visibility& v) {
  for (const auto& d : v.devices)
    if (d.mig) return true;
  return false;
}

}  // namespace gpuenv

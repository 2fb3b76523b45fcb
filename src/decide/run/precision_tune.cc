#include "decide/run/precision_tune.h"

#include <algorithm>
#include <cstdio>

#include "decide/arch.h"
#include "decide/visible.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

// The newest ok measurement of `key` on `uuid`.
const Measurement* find_ok(const Machine& m, const std::string& key, const std::string& uuid) {
  const Measurement* best = nullptr;
  for (const auto& x : m.measurements)
    if (x.key == key && x.gpu_uuid == uuid && x.ok() && x.value && *x.value > 0 &&
        (!best || x.measured_at > best->measured_at))
      best = &x;
  return best;
}

// "gemm_bf16_8192" -> 8192; 0 for other keys.
int gemm_size(const std::string& key, const std::string& prefix) {
  if (key.rfind(prefix, 0) != 0) return 0;
  std::string n = key.substr(prefix.size());
  if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 6) return 0;
  return std::stoi(n);
}

struct Pair {
  double factor;
  int n;
  std::string date;
};

std::optional<Pair> gain_on(const Machine& m, const std::string& uuid, const std::string& base) {
  std::optional<Pair> out;
  for (const auto& x : m.measurements) {
    int n = x.gpu_uuid == uuid ? gemm_size(x.key, "gemm_bf16_") : 0;
    if (n == 0 || (out && out->n >= n)) continue;
    const Measurement* bf16 = find_ok(m, x.key, uuid);
    const Measurement* fp32 = find_ok(m, "gemm_" + base + "_" + std::to_string(n), uuid);
    if (bf16 && fp32) out = Pair{*bf16->value / *fp32->value, n, std::min(bf16->measured_at, fp32->measured_at)};
  }
  return out;
}

}  // namespace

std::string bf16_autocast_refusal(const Machine& m, const Options& o) {
  std::vector<VisibleDevice> devices = visible_devices(m, o).devices;
  if (devices.empty()) return "no GPU is visible to the job";
  if (!distinct_ccs(devices)) return "the compute capability of " + describe_unknown_cc(devices) + " could not be sensed";
  std::vector<VisibleDevice> without;
  for (const auto& d : devices)
    if (auto f = tensor_formats(d.cc()); !f || !f->bf16) without.push_back(d);
  if (without.empty()) return "";
  return describe_devices(without) +
         " has no bf16 tensor cores (they start with Ampere, cc 8.0). fp16 autocast would need loss scaling "
         "(a GradScaler around the script's backward and optimizer step), which cannot be added safely from "
         "outside the script: write torch.autocast(\"cuda\", dtype=torch.float16) with a GradScaler into it";
}

std::optional<Bf16Gain> measured_bf16_gain(const Machine& m, const std::vector<std::string>& uuids, bool tf32) {
  if (uuids.empty()) return std::nullopt;
  std::string base = tf32 ? "tf32" : "fp32";
  std::optional<Pair> least;
  for (const auto& uuid : uuids) {
    auto p = gain_on(m, uuid, base);
    if (!p) return std::nullopt;
    if (!least || p->factor < least->factor) least = p;
  }
  char factor[32];
  std::snprintf(factor, sizeof factor, "%.1f", least->factor);
  std::string n = std::to_string(least->n);
  return Bf16Gain{least->factor, std::string("gemm_bf16_") + n + " over gemm_" + base + "_" + n + " (" + factor +
                                     "x), measured " + std::string(utf8_prefix(least->date, 10))};
}

std::string precision_suggestion(const JobContext& c) {
  if (!c.precision.empty() || !c.bf16) return "";
  std::string gain = "may be faster here (no bf16 and TF32 GEMMs measured on this GPU: gpuenv bench measures them)";
  if (c.bf16_gain) {
    char factor[32];
    std::snprintf(factor, sizeof factor, "%.1f", *c.bf16_gain);
    gain = std::string("would give up to about ") + factor + "x here (measured on this GPU: " + c.bf16_gain_basis +
           ")";
  }
  return ". If it trains in fp32: bf16 autocast " + gain + "; `gpuenv run --tune=+precision` applies it";
}

}  // namespace gpuenv

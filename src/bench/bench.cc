#include "bench/bench.h"

#include <fmt/format.h>

#include <chrono>

#include "bench/stats.h"

namespace gpuenv::bench {
namespace {

bool selected(const BenchOptions& o, const std::string& key) {
  if (o.only.empty()) return true;
  for (const auto& k : o.only)
    if (key.rfind(k, 0) == 0) return true;
  return false;
}

std::vector<Target> targets(CaseScope scope, const std::vector<Device>& devices) {
  std::vector<Target> out;
  if (scope == CaseScope::kDevice) {
    for (const auto& d : devices) out.push_back({{d}});
  } else if (scope == CaseScope::kPair) {
    for (const auto& a : devices)
      for (const auto& b : devices)
        if (a.ordinal != b.ordinal) out.push_back({{a, b}});
  } else {
    out.push_back({devices});
  }
  return out;
}

std::string status_detail(const Result& r) {
  if (r.status == BenchStatus::kWrong) return "wrong result: " + r.message;
  if (r.status == BenchStatus::kError) return "failed: " + r.message;
  return r.detail;
}

// CUDA spells every UUID "GPU-..."; NVML names MIG devices "MIG-...".
bool same_uuid(const std::string& a, const std::string& b) {
  return a.size() > 4 && a.size() == b.size() && a.compare(4, std::string::npos, b, 4) == 0;
}

}  // namespace

const Gpu* BenchContext::gpu_of(const Device& d, bool* mig) const {
  if (mig) *mig = false;
  if (!machine) return nullptr;
  for (const auto& g : machine->gpus) {
    if (g.uuid && same_uuid(*g.uuid, d.uuid)) return &g;
    for (const auto& m : g.mig_devices)
      if (same_uuid(m.uuid, d.uuid)) {
        if (mig) *mig = true;
        return &g;
      }
  }
  return nullptr;
}

std::string target_label(const Result& r) {
  if (r.scope == CaseScope::kAll) return "all";
  if (r.target.devices.empty()) return "-";
  std::string out = std::to_string(r.target.devices[0].ordinal);
  if (r.scope == CaseScope::kPair && r.target.devices.size() == 2)
    out += "->" + std::to_string(r.target.devices[1].ordinal);
  return out;
}

std::string format_value(double v, const std::string& unit) {
  if (unit == "errors") return fmt::format("{:.0f} {}", v, unit);
  if (unit == "us") return fmt::format("{:.2f} {}", v, unit);
  return v >= 100 ? fmt::format("{:.0f} {}", v, unit) : fmt::format("{:.1f} {}", v, unit);
}

std::string Result::unit() const {
  switch (metric) {
    case FigureKind::kTflops:
      return "TFLOP/s";
    case FigureKind::kMicros:
      return "us";
    case FigureKind::kErrors:
      return "errors";
    default:
      return "GB/s";
  }
}

void finish(Result* r) {
  r->value.reset();
  if (r->status != BenchStatus::kOk && r->status != BenchStatus::kWrong) return;
  if (r->metric == FigureKind::kErrors) {
    r->value = static_cast<double>(r->mismatches);
    return;
  }
  auto mid = median(r->samples);
  if (!mid) return;
  if (r->metric == FigureKind::kMicros) {
    r->value = *mid * 1e6;
    return;
  }
  auto per_s = rate(r->work, *mid);
  if (!per_s) return;
  if (r->metric == FigureKind::kTflops) r->value = *per_s / 1e12;
  if (r->metric == FigureKind::kGBps) r->value = *per_s / 1e9;
  if (r->metric == FigureKind::kAllReduceBus)
    if (auto bus = allreduce_busbw(*per_s / 1e9, static_cast<int>(r->target.devices.size()))) r->value = bus;
}

std::vector<Planned> plan_cases(const std::vector<Case>& cases, const BenchContext& ctx) {
  std::vector<Planned> out;
  for (const auto& c : cases) {
    if (!selected(ctx.options, c.key)) continue;
    if (c.scope != CaseScope::kDevice && ctx.devices.size() < 2) {
      out.push_back({c, {ctx.devices}, "needs 2 or more GPUs (" + std::to_string(ctx.devices.size()) + " visible)"});
      continue;
    }
    for (auto& t : targets(c.scope, ctx.devices)) {
      std::optional<std::string> skip = c.filter ? c.filter(ctx, t) : std::nullopt;
      out.push_back({c, std::move(t), std::move(skip)});
    }
  }
  return out;
}

std::vector<Result> run_cases(Backend& backend, const BenchContext& ctx, const std::vector<Planned>& plan,
                              const Progress& progress) {
  std::vector<Result> out;
  for (size_t i = 0; i < plan.size(); ++i) {
    const Planned& p = plan[i];
    if (progress) progress(i, plan.size(), p);
    Result r;
    auto start = std::chrono::steady_clock::now();
    if (p.skip) {
      r.status = BenchStatus::kSkipped;
      r.message = *p.skip;
    } else {
      r = p.c.run(backend, ctx, p.target);
    }
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.key = p.c.key;
    r.description = p.c.description;
    r.scope = p.c.scope;
    r.target = p.target;
    finish(&r);
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<Measurement> to_measurement(const Result& r, const std::string& measured_at) {
  if (r.status == BenchStatus::kSkipped) return std::nullopt;
  Measurement m;
  m.key = r.key;
  if (r.scope != CaseScope::kAll && !r.target.devices.empty()) m.gpu_uuid = r.target.devices[0].uuid;
  if (r.scope == CaseScope::kPair && r.target.devices.size() == 2) m.peer_uuid = r.target.devices[1].uuid;
  m.value = r.status == BenchStatus::kOk ? r.value : std::nullopt;
  m.unit = r.unit();
  m.peak = r.peak;
  m.status = r.status == BenchStatus::kOk ? "ok" : "failed";
  m.detail = status_detail(r);
  m.measured_at = measured_at;
  m.gpuenv_version = GPUENV_VERSION;
  return m;
}

bool parse_sizes(const std::string& text, std::vector<int>* out, std::string* err) {
  std::vector<int> sizes;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty() || item.size() > 6 || item.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(item) < 16 || std::stoi(item) > 65536) {
      *err = "--sizes " + text + ": expected sizes from 16 to 65536 separated by commas, such as 4096,8192";
      return false;
    }
    sizes.push_back(std::stoi(item));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  *out = std::move(sizes);
  return true;
}

}  // namespace gpuenv::bench

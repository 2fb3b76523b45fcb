#include "bench/check.h"

#include <fmt/format.h>

#include <algorithm>

#include "decide/health.h"
#include "model/hardware/clock_events.h"
#include "sys/text.h"

namespace gpuenv::bench {
namespace {

void problem_items(const std::vector<Problem>& ps, const std::string& where, std::vector<CheckItem>* out) {
  for (const auto& p : ps) out->push_back({where, CheckOutcome::kFail, p.message + (p.fix.empty() ? "" : "; " + p.fix)});
}

CheckOutcome verdict_of(Severity s) {
  return s == Severity::kError ? CheckOutcome::kFail : s == Severity::kWarning ? CheckOutcome::kWarn : CheckOutcome::kPass;
}

// The watched GPU's health as decide/health.h judges it: the errors that
// appeared while it ran, the remapping state, the clock events seen.
GpuHealth watched_health(const WatchedGpu& w) {
  GpuHealth h;
  if (w.ecc_uncorrected_before && w.ecc_uncorrected_after)
    h.ecc_uncorrected = *w.ecc_uncorrected_after - *w.ecc_uncorrected_before;
  h.row_remap_pending = w.remapping_pending;
  h.row_remap_failure = w.remapping_failed;
  h.clock_events = w.clock_events;
  return h;
}

// Raises `item` to what the findings say, and appends what they saw. Only
// the seen text is kept, so the GPU index the findings name does not matter.
void judge(const WatchedGpu& w, std::initializer_list<GpuHealthFn> fns, CheckItem* item) {
  GpuHealth h = watched_health(w);
  for (GpuHealthFn fn : fns)
    if (auto f = fn(0, h)) {
      item->verdict = std::max(item->verdict, verdict_of(f->severity));
      item->message += "; it " + f->seen;
    }
}

CheckItem ecc_item(const WatchedGpu& w) {
  CheckItem item{w.uuid + " ECC", CheckOutcome::kPass, "ECC counters not available"};
  if (w.ecc_uncorrected_before && w.ecc_uncorrected_after) {
    item.message = fmt::format("{} new uncorrectable ECC errors", *w.ecc_uncorrected_after - *w.ecc_uncorrected_before);
    if (w.ecc_corrected_before && w.ecc_corrected_after)
      item.message += fmt::format(", {} corrected", *w.ecc_corrected_after - *w.ecc_corrected_before);
  }
  judge(w, {uncorrected_ecc, row_remapping}, &item);
  return item;
}

CheckItem clocks_item(const WatchedGpu& w) {
  CheckItem item{w.uuid + " clocks", CheckOutcome::kPass, fmt::format("{} NVML samples", w.samples)};
  if (w.sm_mhz_min && w.sm_mhz_max) item.message += fmt::format("; SM clock {}-{} MHz", *w.sm_mhz_min, *w.sm_mhz_max);
  if (w.temperature_max_c) item.message += fmt::format("; up to {} C", *w.temperature_max_c);
  if (w.power_max_w) item.message += fmt::format("; up to {} W", *w.power_max_w);
  if (w.clock_events && *w.clock_events)
    item.message += "; clocks held back by: " + join(clock_event_names(*w.clock_events), ", ");
  judge(w, {clock_slowdown}, &item);
  return item;
}

}  // namespace

std::vector<CheckItem> machine_items(const Machine& m, const Plan& plan) {
  std::vector<CheckItem> out;
  problem_items(m.nvidia.problems, "nvidia", &out);
  for (const auto& g : m.gpus)
    if (g.problem) problem_items({*g.problem}, "GPU " + std::to_string(g.index), &out);
  for (const auto& h : gpu_health(m))
    out.push_back({"GPU " + std::to_string(h.gpu) + " " + h.topic, verdict_of(h.severity), h.seen + "; " + h.fix});
  for (const auto& n : plan.notes) {
    if (n.severity == Severity::kInfo) continue;
    out.push_back({"plan " + n.rule, n.severity == Severity::kError ? CheckOutcome::kFail : CheckOutcome::kWarn, n.message});
  }
  if (m.gpus.empty() && m.nvidia.problems.empty()) out.push_back({"nvidia", CheckOutcome::kFail, "no NVIDIA GPU was found"});
  return out;
}

std::vector<CheckItem> result_items(const std::vector<Result>& results) {
  std::vector<CheckItem> out;
  for (const auto& r : results) {
    CheckItem item{"GPU " + target_label(r) + " " + r.key, CheckOutcome::kPass, ""};
    if (r.status == BenchStatus::kSkipped) {
      item.verdict = CheckOutcome::kWarn, item.message = "skipped: " + r.message;
    } else if (r.failed()) {
      item.verdict = CheckOutcome::kFail;
      item.message = (r.status == BenchStatus::kWrong ? "wrong result: " : "failed: ") + r.message;
    } else {
      item.message = (r.value ? format_value(*r.value, r.unit()) + ", " : "") + r.detail;
    }
    out.push_back(std::move(item));
  }
  return out;
}

std::vector<CheckItem> watch_items(const std::vector<WatchedGpu>& watched) {
  std::vector<CheckItem> out;
  for (const auto& g : watched) {
    out.push_back(clocks_item(g));
    out.push_back(ecc_item(g));
  }
  return out;
}

bool passed(const std::vector<CheckItem>& items) {
  if (items.empty()) return false;  // nothing was checked: no pass
  for (const auto& i : items)
    if (i.verdict == CheckOutcome::kFail) return false;
  return true;
}

}  // namespace gpuenv::bench

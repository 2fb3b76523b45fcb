#include "act/render/bench/check_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "act/render/bench/bench_report.h"
#include "model/hardware/clock_events.h"
#include "model/json_opt.h"

namespace gpuenv::bench {
namespace {

using nlohmann::json;

const char* verdict_name(CheckOutcome v) { return v == CheckOutcome::kPass ? "pass" : v == CheckOutcome::kWarn ? "warn" : "fail"; }

}  // namespace

std::string render_check(const std::vector<CheckItem>& items, bool long_check, double seconds, const Style& st) {
  std::string out;
  for (const auto& i : items) {
    std::string tag = i.verdict == CheckOutcome::kPass ? "PASS" : i.verdict == CheckOutcome::kWarn ? "WARN" : "FAIL";
    if (st.color)
      tag = (i.verdict == CheckOutcome::kPass   ? "\033[32m"
             : i.verdict == CheckOutcome::kWarn ? "\033[33m"
                                           : "\033[31m") +
            tag + "\033[0m";
    out += fmt::format("{}  {:<28} {}\n", tag, printable(i.name), printable(i.message));
  }
  if (items.empty()) out += "nothing was checked: no test ran and nothing was there to judge\n";
  out += fmt::format("\ngpuenv check {}: {} in {:.1f} s\n", long_check ? "--long" : "--quick",
                     passed(items) ? "passed" : items.empty() ? "FAILED (nothing was checked)" : "FAILED", seconds);
  return out;
}

json check_json(const std::vector<CheckItem>& items, bool long_check, double seconds,
                const std::vector<Result>& results, const std::vector<WatchedGpu>& watched) {
  json checks = json::array(), ws = json::array();
  for (const auto& i : items)
    checks.push_back({{"name", i.name}, {"verdict", verdict_name(i.verdict)}, {"message", i.message}});
  for (const auto& g : watched)
    ws.push_back({{"uuid", g.uuid},
                  {"samples", g.samples},
                  {"sm_mhz_min", opt(g.sm_mhz_min)},
                  {"sm_mhz_max", opt(g.sm_mhz_max)},
                  {"memory_mhz_min", opt(g.memory_mhz_min)},
                  {"temperature_max_c", opt(g.temperature_max_c)},
                  {"power_max_w", opt(g.power_max_w)},
                  {"clock_events", g.clock_events ? json(clock_event_names(*g.clock_events)) : json(nullptr)},
                  {"ecc_uncorrected_before", opt(g.ecc_uncorrected_before)},
                  {"ecc_uncorrected_after", opt(g.ecc_uncorrected_after)},
                  {"remapping_pending", opt(g.remapping_pending)},
                  {"remapping_failed", opt(g.remapping_failed)}});
  RunInfo info;
  json rs = results_json(info, results)["results"];
  json j = {{"passed", passed(items)}, {"nothing_checked", items.empty()}, {"level", long_check ? "long" : "quick"},
            {"seconds", seconds},      {"checks", checks},
            {"results", rs},           {"watch", ws}};
  return j;
}

json report_json(const CheckReport& r) { return check_json(r.items, r.long_check, r.seconds, r.results, r.watched); }
std::string report_text(const CheckReport& r, const Style& style) {
  return render_check(r.items, r.long_check, r.seconds, style);
}

}  // namespace gpuenv::bench

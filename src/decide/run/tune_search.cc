#include "decide/run/tune_search.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <cstdio>

#include "sys/text.h"

namespace gpuenv {
namespace {

constexpr double kMinNoise = 0.05;  // 5 %: run-to-run spread of a short job on one machine
constexpr double kMaxNoise = 0.5;


double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double spread(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = median(v), lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
  return m > 0 ? (hi - lo) / m : 0;
}

std::map<std::string, std::vector<const TuneRun*>> by_settings(const TuneProfile& p) {
  std::map<std::string, std::vector<const TuneRun*>> out;
  for (const auto& r : p.runs) out[r.settings].push_back(&r);
  return out;
}

// num_workers of `settings`; 0 when absent or not a count. A stored text
// was range-checked on reading (model/tune_profile.h); this one never
// overflows whatever it is given.
int workers(const std::string& settings) {
  TuneSettings s = parse_settings(settings);
  auto it = s.find("num_workers");
  int n = 0;
  if (it == s.end() || std::from_chars(it->second.data(), it->second.data() + it->second.size(), n).ec != std::errc())
    return 0;
  return std::max(n, 0);
}

// The next num_workers down: three quarters, in 64 bits (no overflow at INT_MAX).
int fewer_workers(int w) { return int(std::int64_t(w) * 3 / 4); }

bool tried(const TuneProfile& p, const std::string& settings) {
  return std::any_of(p.runs.begin(), p.runs.end(), [&](const TuneRun& r) { return r.settings == settings; });
}

bool acceptable(const TuneGain& g, double noise) {
  return g.wall <= 1 + noise && (!g.steps_known || g.speed >= 1 - noise);
}

bool helps(const TuneGain& g, double noise) {
  return acceptable(g, noise) && (g.speed > 1 + noise || g.wall < 1 - noise);
}

// Whether a is better than b beyond the noise: faster, or as fast and
// shorter end to end.
bool clearly_better(const TuneGain& a, const TuneGain& b, double noise) {
  if (a.speed > b.speed * (1 + noise)) return true;
  if (b.speed > a.speed * (1 + noise)) return false;
  return a.wall < b.wall * (1 - noise);
}

// Of two helping settings, whether a is better: clearly, or as good as b
// and with fewer workers.
bool better(const TuneGain& a, int wa, const TuneGain& b, int wb, double noise) {
  if (clearly_better(a, b, noise)) return true;
  if (clearly_better(b, a, noise)) return false;
  return wa < wb;
}

std::string choose_kept(const TuneProfile& p, double noise) {
  std::string best;
  std::optional<TuneGain> best_gain;
  for (const auto& [settings, runs] : by_settings(p)) {
    if (settings.empty()) continue;
    auto g = gain_of(p, settings);
    if (!g || !helps(*g, noise)) continue;
    if (!best_gain || better(*g, workers(settings), *best_gain, workers(best), noise)) best = settings, best_gain = g;
  }
  return best;
}

std::string without(const std::string& settings, const std::string& name) {
  TuneSettings s = parse_settings(settings);
  s.erase(name);
  return settings_text(s);
}

std::string with_workers(const std::string& settings, int n) {
  TuneSettings s = parse_settings(settings);
  s["num_workers"] = std::to_string(n);
  if (n == 0) s.erase("persistent_workers");
  return settings_text(s);
}

std::string gain_text(const TuneGain& g) {
  return (g.steps_known ? fixed(g.speed, 2) + "x the untuned steps/s, " : "") + fixed(g.wall, 2) +
         "x its wall time";
}

// The settings some run's script passed itself (its hook's yours=, issue 40):
// --tune never applies them, so the search leaves them alone.
TuneSettings scripts_own(const TuneProfile& p) {
  TuneSettings out;
  for (const auto& r : p.runs) out.merge(parse_settings(r.yours));
  return out;
}

// The verdicts' settings not in `settings`, not dropped, not the script's:
// what a tuned run's own verdict adds.
std::string with_verdicts(const TuneProfile& p, const std::string& settings, const std::vector<Verdict>& verdicts) {
  TuneSettings s = parse_settings(settings), own = scripts_own(p);
  for (const auto& v : verdicts)
    for (const auto& [name, value] : v.tune)
      if (!s.count(name) && !own.count(name) && std::find(p.dropped.begin(), p.dropped.end(), name) == p.dropped.end())
        s[name] = value;
  return settings_text(s);
}

void settle(TuneProfile* p, std::vector<std::string>* notes, const std::string& why) {
  p->settled = true;
  p->next = p->kept;
  notes->push_back(why + "; the search stops: " +
                   (p->kept.empty() ? std::string("runs stay untuned") : "runs apply " + p->kept));
}

// The last run was slower than untuned end to end, or no faster: what to try instead.
void after_a_loss(TuneProfile* p, const TuneRun& run, const TuneGain& g, double noise, std::vector<std::string>* notes) {
  auto s = summarize(*p);
  const TuneSummary& base = s[""];
  const TuneSummary& last = s[run.settings];
  std::string what = run.settings + ": " + gain_text(g);
  TuneSettings set = parse_settings(run.settings);
  bool overhead_grew = !last.overhead_s || !base.overhead_s ||
                       *last.overhead_s - *base.overhead_s > noise * base.wall_s;
  std::string candidate, why;
  if (g.wall > 1 + noise && set.count("persistent_workers") && overhead_grew) {
    candidate = without(run.settings, "persistent_workers");
    p->dropped.push_back("persistent_workers");
    why = "dropped persistent_workers: " + what +
          (last.overhead_s && base.overhead_s ? " (start and exit " + fixed(*last.overhead_s, 1) + " s, untuned " +
                                                    fixed(*base.overhead_s, 1) + " s)"
                                              : "");
  } else if (int w = workers(run.settings); w > 1 && helps(TuneGain{g.speed, 1, g.steps_known}, noise)) {
    candidate = with_workers(run.settings, fewer_workers(w));
    why = "fewer workers: " + what;
  }
  if (candidate.empty() || tried(*p, candidate)) {
    std::string dropped = "dropped " + run.settings + ": " + what + " (noise " + fixed(100 * noise, 0) + "%)";
    return settle(p, notes, dropped);
  }
  p->next = candidate;
  notes->push_back(why + "; the next --tune tries " + candidate);
}

// Whether `run` is `from` with fewer workers and nothing else changed: a step of the search.
bool stepped_down(const std::string& run, const std::string& from) {
  return workers(run) < workers(from) && without(run, "num_workers") == without(from, "num_workers");
}

// The last run helped: add what its verdicts name, else search num_workers
// downward while each step down is better than the one before beyond the
// noise; a step that is not ends the search (issue 40: 15, 11, 8 workers, each
// as fast, had runs 2 and 3 of a series apply different settings).
void after_a_gain(TuneProfile* p, const TuneRun& run, const std::string& before, double noise,
                  const std::vector<Verdict>& verdicts, std::vector<std::string>* notes) {
  if (std::string more = with_verdicts(*p, p->kept, verdicts); more != p->kept && !tried(*p, more)) {
    p->next = more;
    return notes->push_back("its verdict adds settings: the next --tune tries " + more);
  }
  if (!before.empty() && stepped_down(run.settings, before)) {
    auto now = gain_of(*p, run.settings), was = gain_of(*p, before);
    if (!now || !was || !clearly_better(*now, *was, noise))
      return settle(p, notes, "num_workers=" + std::to_string(workers(run.settings)) + " was no better than " +
                                  std::to_string(workers(before)) + " (noise " + fixed(100 * noise, 0) +
                                  "%): converged");
  }
  int w = workers(p->kept);
  std::string smaller = w > 1 ? with_workers(p->kept, fewer_workers(w)) : "";
  if (!smaller.empty() && !tried(*p, smaller)) {
    p->next = smaller;
    return notes->push_back(run.settings + " helped; the next --tune tries num_workers=" + std::to_string(fewer_workers(w)));
  }
  auto g = gain_of(*p, p->kept);
  settle(p, notes, "kept " + p->kept + (g ? ": " + gain_text(*g) : "") +
                       (w > 0 ? " (fewer workers were no better, or none is left to try)" : ""));
}

}  // namespace

TuneSettings parse_settings(const std::string& text) {
  TuneSettings out;
  const auto& names = tune_setting_names();
  for (const auto& part : split_commas(text)) {
    std::size_t eq = part.find('=');
    if (eq == std::string::npos || eq + 1 == part.size()) continue;
    std::string name = part.substr(0, eq);
    if (std::find(names.begin(), names.end(), name) != names.end()) out[name] = part.substr(eq + 1);
  }
  return out;
}

std::string settings_text(const TuneSettings& s) {
  std::vector<std::string> parts;
  for (const auto& name : tune_setting_names())
    if (auto it = s.find(name); it != s.end() && !it->second.empty()) parts.push_back(name + "=" + it->second);
  return join(parts, ",");
}

double tune_noise(const TuneProfile& p) {
  double noise = kMinNoise;
  for (const auto& [settings, runs] : by_settings(p)) {
    std::vector<double> speed, wall;
    for (const TuneRun* r : runs) {
      if (r->steps_per_s) speed.push_back(*r->steps_per_s);
      wall.push_back(r->wall_s);
    }
    noise = std::max({noise, spread(speed), spread(wall)});
  }
  return std::min(noise, kMaxNoise);
}

std::map<std::string, TuneSummary> summarize(const TuneProfile& p) {
  std::map<std::string, TuneSummary> out;
  for (const auto& [settings, runs] : by_settings(p)) {
    std::vector<double> speed, wall, overhead;
    for (const TuneRun* r : runs) {
      if (r->steps_per_s) speed.push_back(*r->steps_per_s);
      if (r->overhead_s) overhead.push_back(*r->overhead_s);
      wall.push_back(r->wall_s);
    }
    TuneSummary& s = out[settings];
    s.runs = int(runs.size());
    s.wall_s = median(wall);
    if (!speed.empty()) s.steps_per_s = median(speed);
    if (!overhead.empty()) s.overhead_s = median(overhead);
  }
  return out;
}

std::optional<TuneGain> gain_of(const TuneProfile& p, const std::string& settings) {
  auto s = summarize(p);
  auto base = s.find(""), it = s.find(settings);
  if (base == s.end() || it == s.end() || base->second.wall_s <= 0 || it->second.wall_s <= 0) return std::nullopt;
  TuneGain g;
  g.wall = it->second.wall_s / base->second.wall_s;
  g.steps_known = base->second.steps_per_s > 0 && it->second.steps_per_s.has_value();
  g.speed = g.steps_known ? *it->second.steps_per_s / *base->second.steps_per_s : 1 / g.wall;
  return g;
}

TuneRun tune_run(const Job& job) {
  TuneRun r;
  r.job_id = job.id, r.at = job.started_at, r.settings = job.tuned, r.wall_s = job.duration_s;
  r.yours = job.context.script_settings;
  if (job.speed) {
    r.steps_per_s = job.speed->steps_per_s;
    if (job.speed->first_step_s && job.speed->exit_tail_s) r.overhead_s = *job.speed->first_step_s + *job.speed->exit_tail_s;
  }
  return r;
}

TuneProfile start_profile(const std::string& command_fp, const TuneRun& baseline, const std::vector<Verdict>& verdicts) {
  TuneProfile p;
  p.command_fp = command_fp;
  TuneRun b = baseline;
  b.settings.clear();
  p.runs.push_back(b);
  p.next = with_verdicts(p, "", verdicts);
  p.note = p.next.empty() ? "the untuned run's verdict names no setting" : "first try: the verdict's " + p.next;
  return p;
}

std::vector<std::string> refine_profile(TuneProfile* p, const TuneRun& run, const std::vector<Verdict>& verdicts) {
  TuneSettings owned_before = scripts_own(*p);
  p->runs.push_back(run);
  if (p->runs.size() > kMaxProfileRuns) p->runs.erase(p->runs.begin());
  double noise = tune_noise(*p);
  std::string before = p->kept;  // what the search stood on before this run
  p->kept = choose_kept(*p, noise);
  std::vector<std::string> notes;
  auto g = run.settings.empty() ? std::nullopt : gain_of(*p, run.settings);
  if (run.settings.empty()) {
    if (p->next.empty() && !p->settled) p->next = with_verdicts(*p, "", verdicts);
  } else if (!g) {
    p->next = run.settings;  // no untuned run to compare with: keep trying it
  } else if (p->settled) {
    if (!p->kept.empty() && run.settings != p->kept) notes.push_back("kept " + p->kept);
    if (p->kept.empty() && !acceptable(*g, noise))
      notes.push_back("dropped " + run.settings + ": " + gain_text(*g) + "; runs stay untuned");
    p->next = p->kept;
  } else if (helps(*g, noise)) {
    after_a_gain(p, run, before, noise, verdicts, &notes);
  } else {
    after_a_loss(p, run, *g, noise, &notes);
  }
  if (g) notes.insert(notes.begin(), run.settings + ": " + gain_text(*g));
  for (const auto& [name, value] : parse_settings(run.yours))
    if (!owned_before.count(name))
      notes.insert(notes.begin(), "the script sets " + name + "=" + value + " itself: --tune leaves " + name +
                                      " alone (searched no further)");
  p->note = join(notes, "; ");
  return notes;
}

std::string profile_line(const TuneProfile& p, const std::string& settings) {
  if (settings.empty()) return "the tuning profile of this command applies nothing" +
                               std::string(p.settled ? " (no setting helped)" : "");
  auto g = gain_of(p, settings);
  return "the tuning profile of this command applies " + settings +
         (g ? " (measured: " + gain_text(*g) + ")" : " (not measured yet)");
}

}  // namespace gpuenv

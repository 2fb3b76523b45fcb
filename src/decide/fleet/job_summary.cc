#include "decide/fleet/job_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

namespace gpuenv::fleet {
namespace {

// How long Prometheus lets a point hold a sample (its lookback delta).
constexpr double kLookback = 300;

using Labels = std::map<std::string, std::string>;
using GpuKey = std::tuple<std::string, std::string, std::string, std::string>;  // node, gpu, UUID, GPU_I_ID

std::string label(const Labels& l, const char* key) {
  auto it = l.find(key);
  return it == l.end() ? "" : it->second;
}

GpuKey gpu_key(const Labels& l) { return {node_of(l), label(l, "gpu"), label(l, "UUID"), label(l, "GPU_I_ID")}; }

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string percent(double ratio) { return fmt("%.0f %%", ratio * 100); }

// ---- one GPU's series

// The series of `list` that are `key`'s, less the copies: a series whose
// life overlaps one already taken by more than the lookback (the same
// exporter scraped twice) is left out; one that follows it (the exporter
// back under a new instance) is kept.
std::vector<const JobSeries*> series_of(const std::vector<JobSeries>& list, const GpuKey& key, double step) {
  std::vector<const JobSeries*> mine;
  for (const JobSeries& s : list)
    if (!s.points.empty() && gpu_key(s.labels) == key) mine.push_back(&s);
  std::stable_sort(mine.begin(), mine.end(),
                   [](const JobSeries* a, const JobSeries* b) { return a->points.front().t < b->points.front().t; });
  std::vector<const JobSeries*> taken;
  for (const JobSeries* s : mine) {
    bool copy = std::any_of(taken.begin(), taken.end(), [&](const JobSeries* t) {
      double overlap = std::min(s->points.back().t, t->points.back().t) - std::max(s->points.front().t, t->points.front().t);
      return overlap > kLookback + step;
    });
    if (!copy) taken.push_back(s);
  }
  return taken;
}

std::vector<TimePoint> points_of(const std::vector<const JobSeries*>& series) {
  std::vector<TimePoint> out;
  for (const JobSeries* s : series) out.insert(out.end(), s->points.begin(), s->points.end());
  std::stable_sort(out.begin(), out.end(), [](const TimePoint& a, const TimePoint& b) { return a.t < b.t; });
  return out;
}

std::vector<TimePoint> points_of(const std::vector<JobSeries>& list, const GpuKey& key, double step) {
  return points_of(series_of(list, key, step));
}

// The points from `first` to `last`: what the GPU's life holds, not the
// lookback's repeats after it; else the first point after `first`.
std::vector<TimePoint> in_life(const std::vector<TimePoint>& points, double first, double last) {
  std::vector<TimePoint> out;
  for (const TimePoint& p : points)
    if (p.t >= first - 1e-6 && p.t <= last + 1e-6 && !std::isnan(p.v)) out.push_back(p);
  if (out.empty())
    for (const TimePoint& p : points)
      if (p.t >= first && !std::isnan(p.v)) return {p};
  return out;
}

std::optional<double> mean(const std::vector<TimePoint>& points) {
  if (points.empty()) return std::nullopt;
  double sum = 0;
  for (const TimePoint& p : points) sum += p.v;
  return sum / static_cast<double>(points.size());
}

std::optional<double> highest(const std::vector<TimePoint>& points) {
  std::optional<double> out;
  for (const TimePoint& p : points)
    if (!std::isnan(p.v) && (!out || p.v > *out)) out = p.v;
  return out;
}

// When an exporter first saw the job: the earliest gpuenv_job_start_timestamp_seconds.
std::optional<double> first_seen(const JobAnswers& a) {
  std::optional<double> seen;
  for (const JobSeries& series : a.start_time)
    for (const TimePoint& p : series.points)
      if (std::isfinite(p.v) && p.v > 0 && (!seen || p.v < *seen)) seen = p.v;
  return seen;
}

// Whether series `s` began inside the window (counter_increase, in the header).
bool began_in_window(const JobSeries& s, const JobAnswers& a) {
  std::optional<double> seen = first_seen(a);
  return s.points.empty() || (seen && *seen >= a.window_start) || s.points.front().t > a.from + 1e-6 ||
         a.from >= a.window_start + a.step - 1e-6;
}

// A counter's increase over each of its series (one after another when the
// exporter came back under a new instance).
std::optional<double> increase(const std::vector<JobSeries>& list, const GpuKey& key, const JobAnswers& a) {
  std::vector<const JobSeries*> series = series_of(list, key, a.step);
  if (series.empty()) return std::nullopt;
  double sum = 0;
  for (const JobSeries* s : series) sum += counter_increase(s->points, began_in_window(*s, a));
  return sum;
}

std::optional<double> life_mean(const std::vector<JobSeries>& list, const GpuKey& key, const GpuUse& g, double step) {
  return mean(in_life(points_of(list, key, step), g.first, g.last));
}

void read_gpu(const JobAnswers& a, const GpuKey& key, GpuUse* g) {
  std::tie(g->node, g->gpu, g->uuid, g->mig) = key;
  std::vector<TimePoint> times = points_of(a.gpu_sample_times, key, a.step);
  bool sampled = !times.empty();  // else no timestamp(): the points' own times
  if (!sampled) times = points_of(a.gpu_seconds, key, a.step);
  g->first = INFINITY, g->last = -INFINITY;
  for (const TimePoint& p : times) {
    double t = sampled && std::isfinite(p.v) ? p.v : p.t;
    g->first = std::min(g->first, t), g->last = std::max(g->last, t);
  }
  g->held_s = increase(a.gpu_seconds, key, a).value_or(0);
  g->energy_j = increase(a.energy, key, a);
  std::optional<double> shared = highest(points_of(a.shared, key, a.step));
  g->shared = shared && *shared >= 0.5;
  std::vector<TimePoint> util = in_life(points_of(a.utilization, key, a.step), g->first, g->last);
  g->utilization = mean(util), g->utilization_max = highest(util);
  g->sm_active = life_mean(a.sm_active, key, *g, a.step);
  g->tensor_active = life_mean(a.tensor_active, key, *g, a.step);
  g->fp32_active = life_mean(a.fp32_active, key, *g, a.step);
  g->fp16_active = life_mean(a.fp16_active, key, *g, a.step);
  g->memory_peak_bytes = highest(points_of(a.memory_peak, key, a.step));
  if (!g->memory_peak_bytes) g->memory_peak_bytes = highest(points_of(a.memory_used, key, a.step));
}

std::vector<GpuUse> read_gpus(const JobAnswers& a) {
  std::set<GpuKey> keys;
  for (const auto* list : {&a.gpu_sample_times, &a.gpu_seconds})
    for (const JobSeries& s : *list)
      if (!s.points.empty()) keys.insert(gpu_key(s.labels));
  std::vector<GpuUse> out;
  for (const GpuKey& key : keys) read_gpu(a, key, &out.emplace_back());
  return out;
}

// ---- the job

void read_identity(const JobAnswers& a, JobSummary* s, std::set<std::string>* schedulers) {
  const std::pair<const char*, std::string*> fields[] = {{"scheduler", &s->scheduler}, {"user", &s->user},
                                                         {"namespace", &s->ns},         {"pod", &s->pod},
                                                         {"container", &s->container},  {"command", &s->command}};
  for (const auto* list : {&a.gpu_seconds, &a.gpu_sample_times, &a.processes, &a.verdict_sample_times})
    for (const JobSeries& series : *list) {
      if (!label(series.labels, "scheduler").empty()) schedulers->insert(label(series.labels, "scheduler"));
      for (const auto& [key, value] : fields)
        if (value->empty()) *value = label(series.labels, key);
    }
}

// The span of the job's GPUs on `node` (the whole job's when it has none there).
std::pair<double, double> node_life(const JobSummary& s, const std::string& node) {
  double first = INFINITY, last = -INFINITY;
  for (const GpuUse& g : s.gpus)
    if (g.node == node) first = std::min(first, g.first), last = std::max(last, g.last);
  return std::isfinite(first) ? std::make_pair(first, last) : std::make_pair(s.start, s.end);
}

std::vector<TimePoint> node_points(const std::vector<JobSeries>& list, const std::string& node) {
  std::vector<TimePoint> out;
  for (const JobSeries& s : list)
    if (node_of(s.labels) == node) out.insert(out.end(), s.points.begin(), s.points.end());
  std::stable_sort(out.begin(), out.end(), [](const TimePoint& a, const TimePoint& b) { return a.t < b.t; });
  return out;
}

NodeCpu read_cpu(const JobAnswers& a, const JobSummary& s, const std::string& node) {
  auto [first, last] = node_life(s, node);
  NodeCpu c{node, mean(in_life(node_points(a.cpu_used, node), first, last)), std::nullopt,
            highest(node_points(a.processes, node))};
  std::vector<TimePoint> allowed = in_life(node_points(a.cpu_allowed, node), first, last);
  if (!allowed.empty()) c.cores_allowed = allowed.back().v;
  return c;
}

void read_times(const JobAnswers& a, JobSummary* s) {
  s->start = INFINITY, s->end = -INFINITY;
  for (const GpuUse& g : s->gpus) s->start = std::min(s->start, g.first), s->end = std::max(s->end, g.last);
  for (const JobSeries& series : a.gpu_seconds)
    if (!series.points.empty() && !began_in_window(series, a)) s->began_before_window = true;
  std::optional<double> seen = first_seen(a);
  if (seen && *seen < s->start) s->start = *seen;
  if (s->start < a.window_start) s->began_before_window = true;
  s->running = a.end_is_now && a.window_end - s->end < kLookback;
}

void add_totals(JobSummary* s) {
  for (const GpuUse& g : s->gpus) {
    s->gpu_hours += g.held_s / 3600;
    if (g.energy_j) s->energy_j = s->energy_j.value_or(0) + *g.energy_j;
    if (g.energy_j && g.shared) s->energy_estimate = true;
  }
}

// ---- notes

std::string gpu_name(const GpuUse& g) {
  std::string gpu = "GPU " + g.gpu + " on " + g.node;
  return g.mig.empty() ? gpu : "MIG device " + g.mig + " of " + gpu;
}

void gpu_notes(const GpuUse& g, std::vector<std::string>* notes) {
  if (g.utilization_max && *g.utilization_max <= 0)
    notes->push_back("This job did not use " + gpu_name(g) + ": its utilisation stayed at 0 %. Ask for the GPUs "
                     "it uses, or find why it never reached this one.");
  else if (g.utilization && *g.utilization < 0.15)
    notes->push_back(gpu_name(g) + " was busy " + percent(*g.utilization) + " of the time (mean utilisation): "
                     "the verdicts below say what held it back.");
  if (g.shared)
    notes->push_back(gpu_name(g) + " was shared with another job: its energy and utilisation here are estimates.");
}

void cpu_notes(const NodeCpu& c, std::vector<std::string>* notes) {
  if (!c.cores_used || !c.cores_allowed || *c.cores_allowed < 2) return;
  double ratio = *c.cores_used / *c.cores_allowed;
  std::string used = fmt("%.1f", *c.cores_used) + " of its " + fmt("%.0f", *c.cores_allowed) + " CPU cores on " + c.node;
  if (ratio < 0.25)
    notes->push_back("It used " + used + " (" + percent(ratio) + "): ask for fewer cores next time.");
  else if (ratio > 0.9)
    notes->push_back("It used " + used + " (" + percent(ratio) + "): its CPU work (data loading) may be what it "
                     "waits for; ask for more cores, or more DataLoader workers if it has cores to spare.");
}

void add_notes(const JobAnswers& a, const std::set<std::string>& schedulers, JobSummary* s) {
  auto& n = s->notes;
  if (s->running) n.push_back("The job is still running: these are its figures so far.");
  if (s->began_before_window)
    n.push_back("The job began before the window asked (--since): the figures cover only the part inside it.");
  if (schedulers.size() > 1) {
    std::string names;
    for (const auto& name : schedulers) names += (names.empty() ? "" : ", ") + name;
    n.push_back("The id " + a.job + " names jobs of several schedulers (" + names + "): their figures are added up.");
  }
  for (const GpuUse& g : s->gpus) gpu_notes(g, &n);
  auto measured = std::count_if(s->gpus.begin(), s->gpus.end(), [](const GpuUse& g) { return g.energy_j.has_value(); });
  if (measured > 0 && static_cast<std::size_t>(measured) < s->gpus.size())
    n.push_back("The energy counts " + std::to_string(measured) + " of its " + std::to_string(s->gpus.size()) +
                " GPUs: MIG devices (and GPUs before Volta) have no energy series.");
  for (const NodeCpu& c : s->cpu) cpu_notes(c, &n);
  if (s->verdicts.empty()) n.push_back("No verdict was exported for this job (gpuenv_job_verdict).");
  else if (s->main_verdict == "too-short") n.push_back("The job was too short for a verdict.");
}

}  // namespace

std::string node_of(const Labels& labels) {
  for (const char* key : {"hostname", "Hostname", "node", "instance"})
    if (auto v = label(labels, key); !v.empty()) return v;
  return "";
}

double counter_increase(const std::vector<TimePoint>& points, bool from_zero) {
  double sum = 0;
  std::optional<double> prev;
  for (const TimePoint& p : points) {
    if (std::isnan(p.v)) continue;
    if (!prev) sum += from_zero ? p.v : 0;
    else sum += p.v >= *prev ? p.v - *prev : p.v;
    prev = p.v;
  }
  return sum;
}

std::vector<VerdictSpan> verdict_spans(const std::vector<JobSeries>& series) {
  // node -> point time -> (sample time, series): the newest sample wins.
  std::map<std::string, std::map<double, std::pair<double, const JobSeries*>>> newest;
  for (const JobSeries& s : series)
    for (const TimePoint& p : s.points) {
      auto& slot = newest[node_of(s.labels)][p.t];
      if (!slot.second || p.v > slot.first) slot = {p.v, &s};
    }
  std::vector<VerdictSpan> out;
  for (const auto& [node, at] : newest) {
    std::map<double, const JobSeries*> said;  // sample time -> series, in time order
    for (const auto& [t, sample] : at) said.emplace(sample.first, sample.second);
    std::size_t first = out.size();
    for (const auto& [t, s] : said) {
      std::string verdict = label(s->labels, "verdict"), fix = label(s->labels, "fix");
      if (out.size() > first && out.back().verdict == verdict) {
        out.back().to = t, out.back().fix = fix;
        continue;
      }
      if (out.size() > first) out.back().to = t;
      out.push_back({node, t, t, verdict, fix});
    }
  }
  return out;
}

void main_verdict(const std::vector<VerdictSpan>& spans, std::string* verdict, std::string* fix, double* seconds) {
  std::map<std::string, std::pair<double, double>> held;  // verdict -> (seconds, latest end)
  for (const VerdictSpan& s : spans) {
    auto& h = held[s.verdict];
    h.first += s.to - s.from, h.second = std::max(h.second, s.to);
  }
  if (held.size() > 1) held.erase("too-short");
  verdict->clear(), fix->clear(), *seconds = 0;
  double latest = -INFINITY;
  for (const auto& [name, h] : held)
    if (h.first > *seconds || (h.first == *seconds && h.second > latest) || verdict->empty())
      *verdict = name, *seconds = h.first, latest = h.second;
  double fix_at = -INFINITY;
  for (const VerdictSpan& s : spans)
    if (s.verdict == *verdict && s.to >= fix_at) *fix = s.fix, fix_at = s.to;
}

std::optional<JobSummary> summarize_job(const JobAnswers& a) {
  JobSummary s;
  s.job = a.job;
  s.gpus = read_gpus(a);
  if (s.gpus.empty()) return std::nullopt;
  std::set<std::string> schedulers, nodes;
  read_identity(a, &s, &schedulers);
  for (const GpuUse& g : s.gpus) nodes.insert(g.node);
  s.nodes.assign(nodes.begin(), nodes.end());
  read_times(a, &s);
  add_totals(&s);
  for (const std::string& node : s.nodes) s.cpu.push_back(read_cpu(a, s, node));
  s.verdicts = verdict_spans(a.verdict_sample_times);
  main_verdict(s.verdicts, &s.main_verdict, &s.main_fix, &s.main_verdict_s);
  add_notes(a, schedulers, &s);
  return s;
}

}  // namespace gpuenv::fleet

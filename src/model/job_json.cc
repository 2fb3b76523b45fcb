#include "model/job_json.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "model/json_opt.h"
#include "model/json_strict.h"
#include "model/tune_profile.h"

namespace gpuenv {
namespace {

using nlohmann::json;

// A GPU's memory (MiB), clock (MHz) or power (W) above this is no reading:
// 1e9 MiB is a petabyte.
constexpr double kMaxGpuFigure = 1e9;

// An optional number at j[key]: absent or null leaves *v unset.
template <typename T>
bool opt_number(const json& j, const char* key, const std::string& path, std::optional<T>* v, std::string* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_number()) return json_fail(path + "." + key, std::string("expected a number, got ") + it->type_name(), err);
  double x = it->get<double>();
  // For an integer type, max() + 1 is a power of two, exact as a double
  // (double(UINT64_MAX) itself rounds up to 2^64, out of range).
  bool in_range = std::is_integral_v<T> ? x >= double(std::numeric_limits<T>::lowest()) &&
                                              x < double(std::numeric_limits<T>::max()) + 1.0
                                        : std::isfinite(x);
  if (!std::isfinite(x) || !in_range) return json_fail(path + "." + key, "out of range", err);
  *v = static_cast<T>(x);
  return true;
}

std::string number_text(double x) {
  return x == std::floor(x) && std::fabs(x) < 1e15 ? std::to_string(static_cast<long long>(x)) : json(x).dump();
}

// opt_number(), then the value must lie in [lo, hi] (a stored value is
// input: verdicts and renderers do arithmetic with it).
template <typename T>
bool bounded(const json& j, const char* key, const std::string& path, std::optional<T>* v, double lo, double hi,
             std::string* err) {
  std::optional<T> x;
  if (!opt_number(j, key, path, &x, err)) return false;
  if (x && !(double(*x) >= lo && double(*x) <= hi))
    return json_fail(path + "." + key, "out of range (" + number_text(lo) + " to " + number_text(hi) + ")", err);
  if (x) *v = x;
  return true;
}

bool opt_string(const json& j, const char* key, const std::string& path, std::optional<std::string>* v,
                std::string* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_string()) return json_fail(path + "." + key, std::string("expected a string, got ") + it->type_name(), err);
  *v = it->get<std::string>();
  return true;
}

json stat_json(const Stat& s) { return s.n ? json::array({s.min, s.mean, s.max, s.n}) : json(nullptr); }

bool stat_from(const json& j, const std::string& path, Stat* s, std::string* err) {
  if (j.is_null()) return true;
  if (!j.is_array() || j.size() != 4) return json_fail(path, "expected [min, mean, max, n]", err);
  for (const auto& x : j)
    if (!x.is_number() || !std::isfinite(x.get<double>())) return json_fail(path, "expected finite numbers", err);
  s->min = j[0].get<double>(), s->mean = j[1].get<double>(), s->max = j[2].get<double>();
  double n = j[3].get<double>();
  if (!(n >= 1 && n <= kMaxPointSamples)) return json_fail(path, "n must be 1 to " + std::to_string(kMaxPointSamples), err);
  s->n = static_cast<int>(n);
  return true;
}

json point_json(const TimelinePoint& p) {
  json j = {{"t0", p.t0}, {"t1", p.t1}, {"samples", p.samples}, {"clock_events", p.clock_events}};
  for (int m = 0; m < kMetricCount; ++m)
    if (p.s[m].n) j[metric_name(Metric(m))] = stat_json(p.s[m]);
  return j;
}

bool point_from(const json& j, const std::string& path, TimelinePoint* p, std::string* err) {
  if (!j.is_object()) return json_fail(path, "expected an object", err);
  std::optional<double> t0, t1;
  std::optional<int> samples;
  std::optional<std::uint64_t> events;
  if (!bounded(j, "t0", path, &t0, 0, kMaxJobSeconds, err) || !bounded(j, "t1", path, &t1, 0, kMaxJobSeconds, err) ||
      !bounded(j, "samples", path, &samples, 1, kMaxPointSamples, err) ||
      !opt_number(j, "clock_events", path, &events, err))
    return false;
  if (!t0 || !t1 || !samples) return json_fail(path, "needs t0, t1 and samples (at least 1)", err);
  p->t0 = *t0, p->t1 = *t1, p->samples = *samples, p->clock_events = events.value_or(0);
  for (int m = 0; m < kMetricCount; ++m) {
    const char* name = metric_name(Metric(m));
    if (auto it = j.find(name); it != j.end() && !stat_from(*it, path + "." + name, &p->s[m], err)) return false;
  }
  return true;
}

json gpu_json(const JobGpu& g) {
  return {{"uuid", g.uuid},
          {"name", opt(g.name)},
          {"memory_total_mib", opt(g.memory_total_mib)},
          {"pcie_gen", opt(g.pcie_gen)},
          {"pcie_width", opt(g.pcie_width)},
          {"max_sm_mhz", opt(g.max_sm_mhz)},
          {"power_limit_w", opt(g.power_limit_w)}};
}

bool gpu_from(const json& j, const std::string& path, JobGpu* g, std::string* err) {
  if (!j.is_object()) return json_fail(path, "expected an object", err);
  std::optional<std::string> uuid;
  if (!opt_string(j, "uuid", path, &uuid, err) || !opt_string(j, "name", path, &g->name, err) ||
      !bounded(j, "memory_total_mib", path, &g->memory_total_mib, 0, kMaxGpuFigure, err) ||
      !bounded(j, "pcie_gen", path, &g->pcie_gen, 0, 64, err) || !bounded(j, "pcie_width", path, &g->pcie_width, 0, 64, err) ||
      !bounded(j, "max_sm_mhz", path, &g->max_sm_mhz, 0, kMaxGpuFigure, err) ||
      !bounded(j, "power_limit_w", path, &g->power_limit_w, 0, kMaxGpuFigure, err))
    return false;
  g->uuid = uuid.value_or("");
  return true;
}

}  // namespace

json timeline_to_json(const Timeline& t) {
  json points = json::array();
  for (const auto& p : t.points()) points.push_back(point_json(p));
  return {{"width", t.width()}, {"points", points}};
}

bool timeline_from_json(const json& j, Timeline* t, std::string* err) {
  if (!j.is_object()) return json_fail("timeline", "expected an object", err);
  std::optional<int> width;
  if (!bounded(j, "width", "timeline", &width, 1, kMaxPointSamples, err)) return false;
  auto it = j.find("points");
  if (it == j.end() || !it->is_array()) return json_fail("timeline.points", "expected an array", err);
  if (it->size() > kMaxTimelinePoints)
    return json_fail("timeline.points", "more than " + std::to_string(kMaxTimelinePoints) + " points", err);
  std::vector<TimelinePoint> points(it->size());
  for (std::size_t i = 0; i < it->size(); ++i)
    if (!point_from((*it)[i], "timeline.points[" + std::to_string(i) + "]", &points[i], err)) return false;
  *t = Timeline::from_points(std::move(points), width.value_or(1));
  return true;
}

// --tune=+precision's fields (issue 25); a record from before them has none.
bool precision_from(const json& j, JobContext* c, std::string* err) {
  std::optional<std::string> precision, basis;
  if (!opt_string(j, "precision", "context", &precision, err)) return false;
  c->precision = precision.value_or("");
  if (auto it = j.find("bf16"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return json_fail("context.bf16", "expected true or false", err);
    c->bf16 = it->get<bool>();
  }
  auto gain = j.find("bf16_gain");
  if (gain == j.end() || gain->is_null()) return true;
  if (!gain->is_object()) return json_fail("context.bf16_gain", "expected an object", err);
  if (!bounded(*gain, "factor", "context.bf16_gain", &c->bf16_gain, 0.001, 1e4, err) ||
      !opt_string(*gain, "basis", "context.bf16_gain", &basis, err))
    return false;
  c->bf16_gain_basis = basis.value_or("");
  return true;
}

// --tune's settings the script passed itself (issue 40); absent before them.
bool script_settings_from(const json& j, JobContext* c, std::string* err) {
  std::optional<std::string> text;
  if (!opt_string(j, "script_settings", "context", &text, err)) return false;
  c->script_settings = text.value_or("");
  if (std::string why = tune_settings_problem(c->script_settings, kMaxScriptWorkers); !why.empty())
    return json_fail("context.script_settings", why, err);
  return true;
}

json context_to_json(const JobContext& c) {
  json gpus = json::array();
  for (const auto& g : c.gpus) gpus.push_back(gpu_json(g));
  json j = {{"gpus", gpus}, {"cpus_per_gpu", opt(c.cpus_per_gpu)}, {"interval_s", c.interval_s},
            {"unwatched", c.unwatched}, {"precision", c.precision}, {"bf16", c.bf16}};
  if (!c.gemm_tflops.empty()) j["gemm_tflops"] = c.gemm_tflops;
  if (c.bf16_gain) j["bf16_gain"] = {{"factor", *c.bf16_gain}, {"basis", c.bf16_gain_basis}};
  if (!c.script_settings.empty()) j["script_settings"] = c.script_settings;
  return j;
}

namespace {

// {"fp32": 51.2, ...}: absent in jobs stored before it (and without bench figures).
bool gemm_from(const json& j, JobContext* c, std::string* err) {
  auto it = j.find("gemm_tflops");
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_object()) return json_fail("context.gemm_tflops", "expected an object", err);
  for (const auto& [key, value] : it->items()) {
    std::optional<double> x;
    if (!bounded(*it, key.c_str(), "context.gemm_tflops", &x, 0, kMaxGpuFigure, err)) return false;
    if (!x || key.size() > 16) return json_fail("context.gemm_tflops." + key, "expected a number (a short key)", err);
    c->gemm_tflops[key] = *x;
  }
  return true;
}

}  // namespace

bool context_from_json(const json& j, JobContext* c, std::string* err) {
  if (!j.is_object()) return json_fail("context", "expected an object", err);
  std::optional<double> interval;
  std::optional<std::string> unwatched;
  if (!bounded(j, "cpus_per_gpu", "context", &c->cpus_per_gpu, 1, 1e6, err) ||
      !bounded(j, "interval_s", "context", &interval, 0.001, 3600, err) ||
      !opt_string(j, "unwatched", "context", &unwatched, err))
    return false;
  c->interval_s = interval.value_or(1.0);
  c->unwatched = unwatched.value_or("");
  if (!gemm_from(j, c, err)) return false;
  if (!precision_from(j, c, err) || !script_settings_from(j, c, err)) return false;
  if (auto it = j.find("gpus"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return json_fail("context.gpus", "expected an array", err);
    c->gpus.resize(it->size());
    for (std::size_t i = 0; i < it->size(); ++i)
      if (!gpu_from((*it)[i], "context.gpus[" + std::to_string(i) + "]", &c->gpus[i], err)) return false;
  }
  return true;
}

json speed_to_json(const JobSpeed& s) {
  return {{"steps", s.steps},
          {"batches", s.batches},
          {"steps_per_s", opt(s.steps_per_s)},
          {"batches_per_s", opt(s.batches_per_s)},
          {"data_wait_share", opt(s.data_wait_share)},
          {"first_step_s", opt(s.first_step_s)},
          {"exit_tail_s", opt(s.exit_tail_s)}};
}

bool speed_from_json(const json& j, JobSpeed* s, std::string* err) {
  if (!j.is_object()) return json_fail("speed", "expected an object", err);
  std::optional<long long> steps, batches;
  if (!bounded(j, "steps", "speed", &steps, 0, 1e15, err) || !bounded(j, "batches", "speed", &batches, 0, 1e15, err) ||
      !bounded(j, "steps_per_s", "speed", &s->steps_per_s, 0, 1e9, err) ||
      !bounded(j, "batches_per_s", "speed", &s->batches_per_s, 0, 1e9, err) ||
      !bounded(j, "data_wait_share", "speed", &s->data_wait_share, 0, 1, err) ||
      !bounded(j, "first_step_s", "speed", &s->first_step_s, 0, kMaxJobSeconds, err) ||
      !bounded(j, "exit_tail_s", "speed", &s->exit_tail_s, 0, kMaxJobSeconds, err))
    return false;
  s->steps = steps.value_or(0), s->batches = batches.value_or(0);
  return true;
}

json job_to_json(const Job& job, bool with_timeline) {
  json j = {{"id", job.id},
            {"argv", job.argv},
            {"cwd", job.cwd},
            {"command_fp", job.command_fp},
            {"script", job.script_path.empty() ? json(nullptr) : json(job.script_path)},
            {"script_fp", job.script_fp.empty() ? json(nullptr) : json(job.script_fp)},
            {"machine_fp", job.machine_fp},
            {"started_at", job.started_at},
            {"duration_s", job.duration_s},
            {"exit_code", job.exit_code},
            {"rank", opt(job.rank)},
            {"local_rank", opt(job.local_rank)},
            {"hostname", job.hostname},
            {"gpuenv_version", job.gpuenv_version},
            {"context", context_to_json(job.context)},
            {"speed", job.speed ? speed_to_json(*job.speed) : json(nullptr)},
            {"tuned", job.tuned},
            {"peak_memory_bytes", job.peak_memory ? json(job.peak_memory->bytes) : json(nullptr)},
            {"peak_memory_source", job.peak_memory ? json(job.peak_memory->source) : json(nullptr)}};
  json plan = json::parse(job.plan_json, nullptr, false);
  j["plan"] = plan.is_discarded() ? json(nullptr) : plan;
  if (with_timeline) j["timeline"] = timeline_to_json(job.timeline);
  return j;
}

}  // namespace gpuenv

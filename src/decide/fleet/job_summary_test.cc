// The job summary over answers made as Prometheus makes them: raw samples
// (every 15 s, as a scrape) turned into range-query points (each the newest
// sample at or before it, for up to 5 minutes) and timestamp() points. A
// table of jobs, each with what the summary must say.
#include "decide/fleet/job_summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace gpuenv::fleet {
namespace {

using Labels = std::map<std::string, std::string>;
constexpr double T0 = 1767225600;  // 2026-01-01T00:00:00Z

struct Raw {
  std::string metric;
  Labels labels;
  std::vector<TimePoint> samples;
};

// Samples every 15 s over [from, to], of value f(seconds since from).
std::vector<TimePoint> every15(double from, double to, const std::function<double(double)>& f) {
  std::vector<TimePoint> out;
  for (double t = from; t <= to + 1e-9; t += 15) out.push_back({t, f(t - from)});
  return out;
}

std::function<double(double)> constant(double v) {
  return [v](double) { return v; };
}

// What a range query answers for `r`: at each step, the newest sample at
// or before it if it is at most 5 minutes old; its value, or its time.
JobSeries range(const Raw& r, double from, double to, double step, bool times) {
  JobSeries out{r.labels, {}};
  for (double t = from; t <= to + 1e-9; t += step) {
    const TimePoint* newest = nullptr;
    for (const TimePoint& s : r.samples)
      if (s.t <= t + 1e-9 && t - s.t <= 300) newest = &s;
    if (newest) out.points.push_back({t, times ? newest->t : newest->v});
  }
  return out;
}

Labels gpu(const std::string& node, const std::string& index, Labels extra = {}) {
  Labels l = {{"job", "42"}, {"user", "alice"}, {"scheduler", "slurm"}, {"hostname", node}, {"gpu", index},
              {"UUID", "GPU-" + node + "-" + index}};
  for (const auto& [k, v] : extra) l[k] = v;
  return l;
}

Labels job_on(const std::string& node, Labels extra = {}) {
  Labels l = {{"job", "42"}, {"user", "alice"}, {"scheduler", "slurm"}, {"hostname", node}};
  for (const auto& [k, v] : extra) l[k] = v;
  return l;
}

Labels verdict(const std::string& node, const std::string& name, const std::string& fix = "") {
  return job_on(node, {{"verdict", name}, {"fix", fix}});
}

// A GPU held for `seconds` from `from`: the counters from 0, power `watts`,
// utilisation `util`.
std::vector<Raw> held(const Labels& l, double from, double seconds, double util, double watts = 200) {
  double to = from + seconds;
  return {{"gpu_seconds", l, every15(from, to, [](double s) { return s; })},
          {"energy", l, every15(from, to, [watts](double s) { return s * watts; })},
          {"utilization", l, every15(from, to, constant(util))},
          {"memory_peak", l, every15(from, to, [](double s) { return 1e9 + s * 1e6; })}};
}

struct World {
  double window_start = T0 - 86400, window_end = T0 + 86400;
  bool end_is_now = false;
  double step = 15;
  std::vector<Raw> raws;

  World& add(std::vector<Raw> more) {
    raws.insert(raws.end(), more.begin(), more.end());
    return *this;
  }
  World& add(Raw r) { return add(std::vector<Raw>{std::move(r)}); }

  JobAnswers answers() const {
    JobAnswers a;
    a.job = "42", a.window_start = window_start, a.window_end = window_end, a.step = step, a.end_is_now = end_is_now;
    const std::map<std::string, std::vector<JobSeries>*> lists = {
        {"gpu_seconds", &a.gpu_seconds}, {"energy", &a.energy},         {"shared", &a.shared},
        {"utilization", &a.utilization}, {"sm", &a.sm_active},          {"tensor", &a.tensor_active},
        {"memory_peak", &a.memory_peak}, {"cpu_used", &a.cpu_used},     {"cpu_allowed", &a.cpu_allowed},
        {"processes", &a.processes},     {"start_time", &a.start_time}};
    // As the report asks: points every step ending at `to`, the first at or after `from`.
    double to = std::min(window_end, T0 + 4 * 3600), from = std::max(window_start, T0 - 600);
    from = to - std::floor((to - from) / step) * step;
    a.from = from;
    for (const Raw& r : raws) {
      if (r.metric == "verdict") {
        a.verdict_sample_times.push_back(range(r, from, to, step, true));
        continue;
      }
      lists.at(r.metric)->push_back(range(r, from, to, step, false));
      if (r.metric == "gpu_seconds") a.gpu_sample_times.push_back(range(r, from, to, step, true));
    }
    return a;
  }
};

struct SummaryRow {
  std::string what;
  World world;
  double gpu_hours;
  std::optional<double> energy_kj;
  bool energy_estimate;
  std::vector<VerdictSpan> spans;
  std::string main, fix;
  std::vector<std::string> notes;  // each must be among the notes, and no other
};

std::vector<SummaryRow> rows() {
  std::vector<SummaryRow> out;
  out.push_back({"one GPU busy for an hour",
                 World{}.add(held(gpu("n1", "0"), T0, 3600, 0.9))
                     .add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 3600, constant(1))}),
                 1.0, 720.0, false, {{"n1", T0, T0 + 3600, "busy", ""}}, "busy", "", {}});
  out.push_back({"two GPUs, one of them never used",
                 World{}.add(held(gpu("n1", "0"), T0, 1800, 0.8)).add(held(gpu("n1", "1"), T0, 1800, 0.0, 60))
                     .add({"verdict", verdict("n1", "idle-held", "release the GPU"), every15(T0, T0 + 1800, constant(1))}),
                 1.0, 468.0, false, {{"n1", T0, T0 + 1800, "idle-held", "release the GPU"}}, "idle-held",
                 "release the GPU",
                 {"This job did not use GPU 1 on n1: its utilisation stayed at 0 %. Ask for the GPUs it uses, or find "
                  "why it never reached this one."}});
  out.push_back({"too-short, then input-bound: the main verdict is input-bound, with its fix",
                 World{}.add(held(gpu("n1", "0"), T0, 5400, 0.35))
                     .add({"verdict", verdict("n1", "too-short"), every15(T0, T0 + 285, constant(1))})
                     .add({"verdict", verdict("n1", "input-bound", "raise num_workers to 8"),
                           every15(T0 + 300, T0 + 5400, constant(1))}),
                 1.5, 1080.0, false,
                 {{"n1", T0, T0 + 300, "too-short", ""}, {"n1", T0 + 300, T0 + 5400, "input-bound", "raise num_workers to 8"}},
                 "input-bound", "raise num_workers to 8", {}});
  out.push_back({"only too-short",
                 World{}.add(held(gpu("n1", "0"), T0, 60, 0.5))
                     .add({"verdict", verdict("n1", "too-short"), every15(T0, T0 + 60, constant(1))}),
                 60.0 / 3600, 12.0, false, {{"n1", T0, T0 + 60, "too-short", ""}}, "too-short", "",
                 {"The job was too short for a verdict."}});
  {  // the exporter restarted half way: the counters start again from 0
    Labels l = gpu("n1", "0");
    Raw secs{"gpu_seconds", l, every15(T0, T0 + 1800, [](double s) { return s; })};
    for (const TimePoint& p : every15(T0 + 1815, T0 + 3600, [](double s) { return s; })) secs.samples.push_back(p);
    out.push_back({"a counter reset counts the new value whole",
                   World{}.add(secs).add({"utilization", l, every15(T0, T0 + 3600, constant(0.5))}), 3585.0 / 3600,
                   std::nullopt, false, {}, "", "", {"No verdict was exported for this job (gpuenv_job_verdict)."}});
  }
  {
    World w;
    w.add(held(gpu("n1", "0"), T0, 3600, 0.4, 300)).add({"shared", gpu("n1", "0"), every15(T0, T0 + 3600, constant(1))});
    w.add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 3600, constant(1))});
    out.push_back({"a shared GPU: energy an estimate", w, 1.0, 1080.0, true, {{"n1", T0, T0 + 3600, "busy", ""}},
                   "busy", "",
                   {"GPU 0 on n1 was shared with another job: its energy and utilisation here are estimates."}});
  }
  {
    World w;
    w.window_start = T0 + 1807;  // the job began half an hour before the window; the first point is at T0 + 1815
    w.add(held(gpu("n1", "0"), T0, 3600, 0.9)).add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 3600, constant(1))});
    w.add({"start_time", job_on("n1"), every15(T0, T0 + 3600, constant(T0))});
    out.push_back({"a job that began before the window: only the window's part", w, 1785.0 / 3600, 357.0, false,
                   {{"n1", T0 + 1815, T0 + 3600, "busy", ""}}, "busy", "",
                   {"The job began before the window asked (--since): the figures cover only the part inside it."}});
  }
  {
    World w;
    w.window_start = T0 - 7;  // the window begins 7 s before the job: its first point sees the first sample
    w.add(held(gpu("n1", "0"), T0, 3600, 0.9)).add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 3600, constant(1))});
    w.add({"start_time", job_on("n1"), every15(T0, T0 + 3600, constant(T0))});
    out.push_back({"a job that began just inside the window", w, 1.0, 720.0, false, {{"n1", T0, T0 + 3600, "busy", ""}},
                   "busy", "", {}});
  }
  {
    World w;
    w.end_is_now = true, w.window_end = T0 + 3630;
    w.add(held(gpu("n1", "0"), T0, 3600, 0.9)).add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 3600, constant(1))});
    out.push_back({"a job still running", w, 1.0, 720.0, false, {{"n1", T0, T0 + 3600, "busy", ""}}, "busy", "",
                   {"The job is still running: these are its figures so far."}});
  }
  {  // NVML counts energy per GPU, not per MIG device: the exporter serves none for these
    World w;
    for (const char* mig : {"1", "2"})
      for (Raw& r : held(gpu("n1", "0", {{"GPU_I_ID", mig}}), T0, 3600, 0.6))
        if (r.metric != "energy") w.add(r);
    w.add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 3600, constant(1))});
    out.push_back({"two MIG devices of one GPU are two devices, without energy", w, 2.0, std::nullopt, false,
                   {{"n1", T0, T0 + 3600, "busy", ""}}, "busy", "", {}});
  }
  {
    World w;
    w.add(held(gpu("n1", "0"), T0, 3600, 0.6));
    for (Raw& r : held(gpu("n1", "1", {{"GPU_I_ID", "3"}}), T0, 3600, 0.6))
      if (r.metric != "energy") w.add(r);
    w.add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 3600, constant(1))});
    out.push_back({"energy of some GPUs only: said", w, 2.0, 720.0, false, {{"n1", T0, T0 + 3600, "busy", ""}}, "busy",
                   "", {"The energy counts 1 of its 2 GPUs: MIG devices (and GPUs before Volta) have no energy series."}});
  }
  {  // one exporter scraped by two scrape jobs: the same series under two instances
    World w;
    for (const char* instance : {"10.0.0.1:9400", "n1:9400"})
      w.add(held(gpu("n1", "0", {{"instance", instance}}), T0, 3600, 0.9));
    w.add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 3600, constant(1))});
    out.push_back({"a series scraped twice counts once", w, 1.0, 720.0, false, {{"n1", T0, T0 + 3600, "busy", ""}},
                   "busy", "", {}});
  }
  {  // the exporter came back under a new instance half way
    World w;
    w.add(held(gpu("n1", "0", {{"instance", "10.0.0.1:9400"}}), T0, 1800, 0.9));
    w.add(held(gpu("n1", "0", {{"instance", "10.0.0.2:9400"}}), T0 + 1815, 1785, 0.9));
    w.add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 3600, constant(1))});
    out.push_back({"an exporter back under a new instance: both parts count", w, 3585.0 / 3600, 3585 * 0.2, false,
                   {{"n1", T0, T0 + 3600, "busy", ""}}, "busy", "", {}});
  }
  {
    World w;
    w.add(held(gpu("n1", "0"), T0, 3600, 0.9)).add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 3600, constant(1))});
    w.add({"cpu_used", job_on("n1"), every15(T0, T0 + 3600, constant(1.5))});
    w.add({"cpu_allowed", job_on("n1"), every15(T0, T0 + 3600, constant(16))});
    out.push_back({"a job that used few of its CPU cores", w, 1.0, 720.0, false, {{"n1", T0, T0 + 3600, "busy", ""}},
                   "busy", "", {"It used 1.5 of its 16 CPU cores on n1 (9 %): ask for fewer cores next time."}});
  }
  {
    World w;
    w.add(held(gpu("n1", "0"), T0, 3600, 0.1)).add({"verdict", verdict("n1", "input-bound", "more workers"), every15(T0, T0 + 3600, constant(1))});
    w.add({"cpu_used", job_on("n1"), every15(T0, T0 + 3600, constant(7.6))});
    w.add({"cpu_allowed", job_on("n1"), every15(T0, T0 + 3600, constant(8))});
    out.push_back({"a job that used all its cores, its GPU little", w, 1.0, 720.0, false,
                   {{"n1", T0, T0 + 3600, "input-bound", "more workers"}}, "input-bound", "more workers",
                   {"GPU 0 on n1 was busy 10 % of the time (mean utilisation): the verdicts below say what held it back.",
                    "It used 7.6 of its 8 CPU cores on n1 (95 %): its CPU work (data loading) may be what it waits for; "
                    "ask for more cores, or more DataLoader workers if it has cores to spare."}});
  }
  {
    World w;
    w.add(held(gpu("n1", "0"), T0, 3600, 0.9)).add(held(gpu("n2", "0"), T0, 3600, 0.9));
    w.add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 3600, constant(1))});
    w.add({"verdict", verdict("n2", "throttled", "cool it"), every15(T0, T0 + 1200, constant(1))});
    w.add({"verdict", verdict("n2", "busy"), every15(T0 + 1215, T0 + 3600, constant(1))});
    out.push_back({"two nodes, each with its verdicts; busy held longest", w, 2.0, 1440.0, false,
                   {{"n1", T0, T0 + 3600, "busy", ""}, {"n2", T0, T0 + 1215, "throttled", "cool it"},
                    {"n2", T0 + 1215, T0 + 3600, "busy", ""}},
                   "busy", "", {}});
  }
  return out;
}

TEST(JobSummary, Table) {
  for (const SummaryRow& row : rows()) {
    SCOPED_TRACE(row.what);
    std::optional<JobSummary> s = summarize_job(row.world.answers());
    ASSERT_TRUE(s);
    EXPECT_NEAR(s->gpu_hours, row.gpu_hours, 1e-9);
    ASSERT_EQ(s->energy_j.has_value(), row.energy_kj.has_value());
    if (row.energy_kj) {
      EXPECT_NEAR(*s->energy_j / 1000, *row.energy_kj, 1e-6);
    }
    EXPECT_EQ(s->energy_estimate, row.energy_estimate);
    EXPECT_EQ(s->verdicts, row.spans);
    EXPECT_EQ(s->main_verdict, row.main);
    EXPECT_EQ(s->main_fix, row.fix);
    EXPECT_EQ(s->notes, row.notes);
  }
}

TEST(JobSummary, TheJobAndItsGpus) {
  World w;
  Labels k8s = {{"namespace", "ml"}, {"pod", "train-0"}, {"container", "trainer"}, {"scheduler", "kubernetes"}};
  w.add(held(gpu("n1", "1", k8s), T0 + 60, 3600, 0.5)).add(held(gpu("n1", "0", k8s), T0, 3600, 0.7));
  w.add({"sm", gpu("n1", "0", k8s), every15(T0, T0 + 3600, constant(0.6))});
  w.add({"start_time", job_on("n1", k8s), every15(T0, T0 + 3660, constant(T0 - 5))});
  w.add({"processes", job_on("n1", k8s), every15(T0, T0 + 3660, [](double s) { return s < 100 ? 2 : 9; })});
  std::optional<JobSummary> s = summarize_job(w.answers());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->scheduler, "kubernetes");
  EXPECT_EQ(s->user, "alice");
  EXPECT_EQ(s->ns, "ml");
  EXPECT_EQ(s->pod, "train-0");
  EXPECT_EQ(s->container, "trainer");
  EXPECT_EQ(s->nodes, std::vector<std::string>{"n1"});
  EXPECT_DOUBLE_EQ(s->start, T0 - 5);  // when the exporter first saw it
  EXPECT_DOUBLE_EQ(s->end, T0 + 3660);
  ASSERT_EQ(s->gpus.size(), 2u);
  const GpuUse& g0 = s->gpus[0];
  EXPECT_EQ(g0.gpu, "0");
  EXPECT_EQ(g0.uuid, "GPU-n1-0");
  EXPECT_DOUBLE_EQ(g0.first, T0);
  EXPECT_DOUBLE_EQ(g0.last, T0 + 3600);
  EXPECT_DOUBLE_EQ(g0.held_s, 3600);
  EXPECT_NEAR(*g0.utilization, 0.7, 1e-12);
  EXPECT_NEAR(*g0.sm_active, 0.6, 1e-12);
  EXPECT_FALSE(g0.tensor_active);  // not Hopper: unknown, never 0
  EXPECT_DOUBLE_EQ(*g0.memory_peak_bytes, 1e9 + 3600 * 1e6);
  EXPECT_DOUBLE_EQ(s->gpus[1].first, T0 + 60);
  ASSERT_EQ(s->cpu.size(), 1u);
  EXPECT_EQ(s->cpu[0].processes, 9);
  EXPECT_FALSE(s->cpu[0].cores_used);
}

TEST(JobSummary, NoGpuSampleIsNoJob) {
  World w;
  w.add({"verdict", verdict("n1", "busy"), every15(T0, T0 + 60, constant(1))});
  EXPECT_FALSE(summarize_job(w.answers()));
  EXPECT_FALSE(summarize_job(JobAnswers{}));
}

// The node's label as gpuenv export (and dcgm-exporter 4.x) names it, as
// --hostname-label Hostname and exporters before the rename do, then the
// labels a relabelling may have put there.
TEST(JobSummary, NodeOf) {
  EXPECT_EQ(node_of({{"hostname", "n1"}, {"instance", "n1:9400"}}), "n1");
  EXPECT_EQ(node_of({{"Hostname", "n2"}, {"instance", "n2:9400"}}), "n2");
  EXPECT_EQ(node_of({{"node", "n3"}, {"instance", "n3:9400"}}), "n3");
  EXPECT_EQ(node_of({{"instance", "n4:9400"}}), "n4:9400");
  EXPECT_EQ(node_of({{"hostname", ""}, {"Hostname", "n5"}}), "n5");
  EXPECT_EQ(node_of({}), "");
}

// A fleet where some exporters say hostname and others Hostname: each GPU
// and span has its node either way.
TEST(JobSummary, EitherHostLabel) {
  World w;
  w.add({"gpu_seconds", gpu("n1", "0"), every15(T0, T0 + 600, [](double s) { return s; })});
  Labels old = gpu("n2", "0");
  old.erase("hostname");
  old["Hostname"] = "n2";
  w.add({"gpu_seconds", old, every15(T0, T0 + 600, [](double s) { return s; })});
  Labels v = verdict("n2", "busy");
  v.erase("hostname");
  v["Hostname"] = "n2";
  w.add({"verdict", v, every15(T0, T0 + 600, constant(1))});
  auto s = summarize_job(w.answers());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->gpus.size(), 2u);
  EXPECT_EQ(s->gpus[0].node, "n1");
  EXPECT_EQ(s->gpus[1].node, "n2");
  EXPECT_EQ(s->nodes, (std::vector<std::string>{"n1", "n2"}));
  ASSERT_FALSE(s->verdicts.empty());
  EXPECT_EQ(s->verdicts[0].node, "n2");
}

TEST(JobSummary, CounterIncrease) {
  EXPECT_DOUBLE_EQ(counter_increase({{0, 5}, {1, 7}, {2, 7}, {3, 10}}, true), 10);
  EXPECT_DOUBLE_EQ(counter_increase({{0, 5}, {1, 7}, {2, 7}, {3, 10}}, false), 5);
  EXPECT_DOUBLE_EQ(counter_increase({{0, 5}, {1, 8}, {2, 2}, {3, 4}}, false), 7);  // reset at 2
  EXPECT_DOUBLE_EQ(counter_increase({{0, 1}, {1, NAN}, {2, 3}}, false), 2);
  EXPECT_DOUBLE_EQ(counter_increase({}, true), 0);
}

TEST(JobSummary, MainVerdictTiesGoToTheLatest) {
  std::string v, fix;
  double s;
  main_verdict({{"n", 0, 10, "copy-bound", "a"}, {"n", 10, 20, "busy", ""}}, &v, &fix, &s);
  EXPECT_EQ(v, "busy");
  main_verdict({{"n", 0, 10, "copy-bound", "a"}, {"n", 10, 15, "busy", ""}, {"n", 15, 20, "copy-bound", "b"}}, &v, &fix, &s);
  EXPECT_EQ(v, "copy-bound");
  EXPECT_EQ(fix, "b");
  EXPECT_DOUBLE_EQ(s, 15);
  main_verdict({}, &v, &fix, &s);
  EXPECT_EQ(v, "");
}

}  // namespace
}  // namespace gpuenv::fleet

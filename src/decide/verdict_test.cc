#include "decide/verdict.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "model/job_json.h"
#include "test_paths.h"

namespace gpuenv {
namespace {

struct Recorded {
  JobContext context;
  Timeline timeline;
};

// n samples a second apart, sample i as fill(i, &sample) sets it.
Timeline samples(int n, const std::function<void(int, JobSample*)>& fill) {
  Timeline t;
  for (int i = 0; i < n; ++i) {
    JobSample s;
    s.t = i;
    fill(i, &s);
    t.add(s);
  }
  return t;
}

Recorded load(const std::string& name) {
  std::ifstream f(test_paths::tests_dir() + "/timelines/" + name + ".json");
  std::stringstream text;
  text << f.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  Recorded r;
  std::string err;
  EXPECT_TRUE(context_from_json(j["context"], &r.context, &err)) << name << ": " << err;
  EXPECT_TRUE(timeline_from_json(j["timeline"], &r.timeline, &err)) << name << ": " << err;
  return r;
}

std::vector<std::string> names(const std::vector<Verdict>& vs) {
  std::vector<std::string> out;
  for (const auto& v : vs) out.push_back(v.name);
  return out;
}

// Each recorded timeline (tests/timelines/make.py), the verdicts it gets in
// order, and words its first verdict's evidence and fix must hold.
struct VerdictRow {
  const char* file;
  std::vector<std::string> verdicts;
  std::vector<std::string> evidence, fix;
  std::map<std::string, std::string> tune;
};

const std::vector<VerdictRow>& rows() {
  static const std::vector<VerdictRow> kRows = {
      {"input_bound", {"input-bound"}, {"busy 9%", "0.99 cores", "0 worker"},
       {"num_workers=15", "pin_memory=True", "persistent_workers=True", "16 CPUs per GPU"},
       {{"num_workers", "15"}, {"pin_memory", "True"}, {"persistent_workers", "True"}}},
      {"input_bound_saturated", {"input-bound", "memory-headroom"}, {"15 worker processes"}, {"cheaper"}, {}},
      {"busy", {"busy", "memory-headroom"}, {"busy 97%", "nvidia-smi's utilisation alone", "no NVML GPM"},
       {"nothing to gain"}, {}},
      {"busy_gpm", {"busy"}, {"busy 98%", "NVML GPM: SMs busy 96%, tensor pipe 85%, FP32 pipe 3%"}, {"nothing to gain"}, {}},
      {"fp32_cuda_cores", {"fp32-on-cuda-cores", "busy", "memory-headroom"},
       {"busy 98%", "tensor pipe 0.0%", "FP32 pipe worked 62%", "CUDA cores"},
       {"set_float32_matmul_precision(\"high\")", "bfloat16", "fp32 GEMMs at 47.0 TFLOP/s", "TF32 at 355.2 (7.6x)",
        "bf16 at 703.4 (15.0x)"},
       {}},
      {"fp32_cuda_cores_unmeasured", {"fp32-on-cuda-cores", "busy", "memory-headroom"}, {"tensor pipe 0.0%"},
       {"TF32", "bfloat16", "has not measured", "gpuenv bench"}, {}},
      {"low_sm_activity", {"low-sm-activity", "busy"}, {"busy 97%", "only 18% of its SMs busy", "occupancy 9%"},
       {"too small", "torch.compile", "CUDA graphs"}, {}},
      {"memory_headroom", {"memory-headroom"}, {"9.1 GiB of 140.4 GiB"}, {"larger batch", "plan-memory"}, {}},
      {"thermal", {"throttled", "busy"}, {"sw_thermal_slowdown", "of 1980 MHz"}, {"cooling"}, {}},
      {"power_capped", {"throttled"}, {"power limit", "1500 of 1980 MHz"}, {"nvidia-smi -pl"}, {}},
      {"copy_bound", {"copy-bound", "memory-headroom"}, {"43.9 GB/s", "of the PCIe link (63.0 GB/s)"}, {"pin_memory=True", "uint8"},
       {{"pin_memory", "True"}}},
      {"idle", {"idle"}, {"never rose above 0%"}, {"never used the GPU"}, {}},
      {"idle_held", {"idle-held"}, {"held 6", "never rose above 0%"}, {"does not use", "fewer GPUs"}, {}},
      {"memory_full", {"memory-full", "busy"}, {"135.8 GiB of 140.4 GiB", "97%"}, {"plan-memory", "expandable_segments"}, {}},
      {"other_gpu", {"idle"}, {"20480 MiB on a GPU it was not given"}, {"another GPU"}, {}},
      {"unclear", {"unclear"}, {"busy 75%"}, {"nothing to apply"}, {}},
      {"too_short", {"too-short"}, {"3 samples"}, {"longer"}, {}},
      {"unwatched", {"unwatched"}, {"cannot open shared object"}, {"nothing to judge"}, {}},
  };
  return kRows;
}

TEST(Verdict, RecordedTimelines) {
  for (const auto& row : rows()) {
    Recorded r = load(row.file);
    std::vector<Verdict> vs = judge(r.context, r.timeline);
    EXPECT_EQ(names(vs), row.verdicts) << row.file;
    if (vs.empty()) continue;
    for (const auto& w : row.evidence)
      EXPECT_NE(vs[0].evidence.find(w), std::string::npos) << row.file << ": \"" << w << "\" not in: " << vs[0].evidence;
    for (const auto& w : row.fix)
      EXPECT_NE(vs[0].fix.find(w), std::string::npos) << row.file << ": \"" << w << "\" not in: " << vs[0].fix;
    EXPECT_EQ(vs[0].tune, row.tune) << row.file;
  }
}

// Every verdict name the rules can give has a row that gives it first.
TEST(Verdict, EveryVerdictHasARow) {
  std::set<std::string> first;
  for (const auto& row : rows()) first.insert(row.verdicts[0]);
  for (const char* name : {"idle", "idle-held", "copy-bound", "input-bound", "throttled", "fp32-on-cuda-cores",
                           "low-sm-activity", "memory-full", "busy", "memory-headroom", "unclear", "too-short", "unwatched"})
    EXPECT_TRUE(first.count(name) || name == std::string("memory-headroom")) << name;
  EXPECT_TRUE(first.count("memory-headroom"));
}

// The fewer CPUs per GPU, the fewer workers; one CPU stays with the loop.
TEST(Verdict, WorkersFollowTheCpus) {
  EXPECT_EQ(suggested_workers(16), 15);
  EXPECT_EQ(suggested_workers(1), 1);
  EXPECT_EQ(suggested_workers(200), 32);
  EXPECT_EQ(suggested_workers(std::nullopt), 4);
  Recorded r = load("input_bound");
  r.context.cpus_per_gpu = 6;
  EXPECT_EQ(judge(r.context, r.timeline)[0].tune.at("num_workers"), "5");
}

// The job's own speed decides whether input-bound is the DataLoader's: a loop
// that waited for its batches keeps the loader fix (and --tune's settings), one
// that never used a DataLoader or hardly waited gets the loop's own fix instead.
TEST(Verdict, InputBoundAsksTheJobsSpeed) {
  Recorded r = load("input_bound");
  auto with = [](long long batches, std::optional<double> wait) {
    JobSpeed s;
    s.steps = 100, s.batches = batches, s.steps_per_s = 4, s.data_wait_share = wait;
    return s;
  };
  Verdict unknown = judge(r.context, r.timeline)[0];
  ASSERT_EQ(unknown.name, "input-bound");
  EXPECT_FALSE(unknown.tune.empty());

  Verdict waited = judge(r.context, r.timeline, with(100, 0.8))[0];
  EXPECT_EQ(waited.name, "input-bound");
  EXPECT_EQ(waited.tune, unknown.tune);
  EXPECT_NE(waited.evidence.find("waited for the next DataLoader batch 80% of the time"), std::string::npos)
      << waited.evidence;

  for (const JobSpeed& s : {with(0, std::nullopt), with(100, 0.02)}) {
    Verdict v = judge(r.context, r.timeline, s)[0];
    EXPECT_EQ(v.name, "input-bound");
    EXPECT_TRUE(v.tune.empty()) << v.evidence;
    EXPECT_NE(v.fix.find("in the training loop itself"), std::string::npos) << v.fix;
  }
  // Steps unseen (not torch's optimizer): the speed says nothing, the CPU figures decide.
  JobSpeed none;
  EXPECT_EQ(judge(r.context, r.timeline, none)[0].tune, unknown.tune);
}

// issue 40: a --tune run whose script passed its own num_workers (the hook's
// report): the fix says to pass the suggested count in the script, since
// --tune cannot, and --tune's settings leave what the script set alone.
TEST(Verdict, InputBoundFixWhenTheScriptSetsItsWorkers) {
  Recorded r = load("input_bound");
  r.context.script_settings = "num_workers=4,pin_memory=True";
  Verdict v = judge(r.context, r.timeline)[0];
  ASSERT_EQ(v.name, "input-bound");
  EXPECT_NE(v.fix.find("pass num_workers=15 to your DataLoader (16 CPUs per GPU here, one left for the loop; "
                       "gpuenv run --tune cannot: the script sets num_workers=4 itself)"),
            std::string::npos)
      << v.fix;
  EXPECT_EQ(v.fix.find("applies it"), std::string::npos) << v.fix;
  EXPECT_EQ(v.tune, (std::map<std::string, std::string>{{"persistent_workers", "True"}}));
  // The script set pin_memory only: num_workers is --tune's again, as today.
  r.context.script_settings = "pin_memory=True";
  v = judge(r.context, r.timeline)[0];
  EXPECT_NE(v.fix.find("gpuenv run --tune applies it without editing the script"), std::string::npos) << v.fix;
  EXPECT_EQ(v.tune, (std::map<std::string, std::string>{{"num_workers", "15"}, {"persistent_workers", "True"}}));
}

// issue 21, 20: 1e308 MiB on two GPUs (inf) reached int(inf), undefined
// behaviour; cpus_per_gpu INT_MIN overflowed in suggested_workers().
TEST(Verdict, HugeCapacitiesStayDefined) {
  JobContext c;
  for (const char* uuid : {"GPU-a", "GPU-b"}) c.gpus.push_back({uuid, "H200", 1e308, 5, 16, 1980.0, 700.0});
  Timeline t = samples(30, [](int, JobSample* s) { s->v[kUtilPct] = 50, s->v[kMemMib] = 1000; });
  std::vector<Verdict> vs = judge(c, t);
  ASSERT_EQ(names(vs), std::vector<std::string>{"memory-headroom"});
  EXPECT_NE(vs[0].fix.find("up to about 8x the batch"), std::string::npos) << vs[0].fix;
  EXPECT_EQ(suggested_workers(std::numeric_limits<int>::min()), 1);
}

// The GPM verdicts need GPM's figures: the same fp32 job without them (a GPU
// before Hopper) is only busy, and its evidence says what it rests on.
TEST(Verdict, WithoutGpmTheFp32JobIsBusyByUtilisation) {
  Recorded r = load("fp32_cuda_cores");
  std::vector<TimelinePoint> points = r.timeline.points();
  for (auto& p : points)
    for (Metric m : {kSmActivePct, kTensorActivePct, kFp32ActivePct, kFp16ActivePct, kDramActivePct, kSmOccupancyPct})
      p.s[m] = Stat{};
  std::vector<Verdict> vs = judge(r.context, Timeline::from_points(points, r.timeline.width()));
  ASSERT_EQ(names(vs), (std::vector<std::string>{"busy", "memory-headroom"}));
  EXPECT_NE(vs[0].evidence.find("no NVML GPM figures"), std::string::npos) << vs[0].evidence;
}

// A device NVML gives no utilisation of (a MIG device before Hopper, no GPM):
// the verdict says so, never "busy 0%", and reports no util_pct figure.
TEST(Verdict, NoUtilisationIsSaidNotMadeZero) {
  JobContext c;
  c.gpus.push_back({"MIG-a", "NVIDIA A100-SXM4-80GB MIG 2g.20gb", 19968.0, 4, 16, 1410.0, 400.0});
  Timeline t = samples(10, [](int, JobSample* s) { s->v[kMemMib] = 12000, s->v[kPowerW] = 150; });
  std::vector<Verdict> vs = judge(c, t);
  ASSERT_EQ(names(vs), std::vector<std::string>{"unclear"});
  EXPECT_EQ(vs[0].evidence, "NVML gave no utilisation of the GPU over 10 s (it gives none of a MIG device, where "
                            "GPM stands in from Hopper on); no rule matched");
  EXPECT_TRUE(vs[0].figures.empty());
}

// Thresholds: a tensor pipe at 5% is working; an FP32 pipe under 20% is not
// where the time goes; SMs at 50% are not "low".
TEST(Verdict, GpmThresholds) {
  auto job = [](double tensor, double fp32, double sm) {
    JobContext c;
    c.gpus.push_back({"GPU-a", "H200", 143771.0, 5, 16, 1980.0, 700.0});
    Timeline t = samples(30, [&](int, JobSample* s) {
      s->v[kUtilPct] = 99, s->v[kMemMib] = 100000;
      s->v[kTensorActivePct] = tensor, s->v[kFp32ActivePct] = fp32, s->v[kSmActivePct] = sm;
    });
    return names(judge(c, t))[0];
  };
  EXPECT_EQ(job(0, 60, 90), "fp32-on-cuda-cores");
  EXPECT_EQ(job(5, 60, 90), "busy");
  EXPECT_EQ(job(0, 19, 90), "busy");
  EXPECT_EQ(job(40, 10, 49), "low-sm-activity");
  EXPECT_EQ(job(40, 10, 50), "busy");
}

TEST(Verdict, PcieLinks) {
  EXPECT_NEAR(pcie_link_mbs(5, 16), 63008, 1);
  EXPECT_NEAR(pcie_link_mbs(4, 8), 15752, 1);
  EXPECT_EQ(pcie_link_mbs(0, 16), 0);
  EXPECT_EQ(pcie_link_mbs(7, 16), 0);
}

// The start-up phase (before the job holds GPU memory) is not held against it:
// a busy job with a long import phase is still busy.
TEST(Verdict, StartupIsNotCounted) {
  JobContext c;
  c.gpus.push_back({"GPU-x", "H200", 143771.0, 5, 16, 1980.0, 700.0});
  Timeline t = samples(100, [](int i, JobSample* s) {
    bool started = i >= 60;
    s->v[kUtilPct] = started ? 99 : 0;
    s->v[kMemMib] = started ? 100000 : 0;
    s->v[kTopCpuCores] = 1.0;
  });
  EXPECT_EQ(judge(c, t)[0].name, "busy");
}

// NVML's utilisation trails by up to a second: a GPU still busy with the
// job before reads busy while this one builds its model (memory held, no
// kernels). The hook's first step, when there is one, opens the window.
TEST(Verdict, StartupAfterABusyGpuIsNotCountedWhenTheHookSawTheFirstStep) {
  JobContext c;
  c.gpus.push_back({"GPU-x", "H200", 143771.0, 5, 16, 1980.0, 700.0});
  Timeline t = samples(40, [](int i, JobSample* s) {
    s->v[kUtilPct] = i == 0 ? 100 : i < 10 ? 0 : 99;  // the job before, then start-up, then the loop
    s->v[kMemMib] = 20000;
    s->v[kTopCpuCores] = 1.0;
  });
  EXPECT_NE(judge(c, t, std::nullopt)[0].name, "busy") << "without the hook, start-up counts";
  JobSpeed speed;
  speed.steps = 300;
  speed.first_step_s = 9.5;
  std::vector<Verdict> v = judge(c, t, speed);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].name, "busy") << v[0].evidence;
  EXPECT_EQ(v[0].figures.at("util_pct"), 99);
}

// A job read back leads with the verdict stored with it; one from before the
// verdict was stored (an older store's row) is judged as it is.
TEST(Verdict, TheStoredVerdictLeadsAndAnOldRowIsJudged) {
  Job job;
  job.context.gpus.push_back({"GPU-x", "H200", 143771.0, 5, 16, 1980.0, 700.0});
  job.timeline =
      samples(20, [](int, JobSample* s) { s->v[kUtilPct] = 30, s->v[kMemMib] = 20000, s->v[kTopCpuCores] = 1.0; });
  std::vector<Verdict> judged = judge(job);
  ASSERT_EQ(judged[0].name, "input-bound");
  EXPECT_EQ(main_verdict(job), to_job_verdict(judged[0])) << "an old row: judged";
  EXPECT_EQ(verdicts_of(job)[0].evidence, judged[0].evidence);
  EXPECT_EQ(verdicts_of(job).size(), judged.size());

  job.verdict = JobVerdict{"input-bound", "stored evidence", "stored fix"};
  EXPECT_EQ(main_verdict(job), *job.verdict);
  std::vector<Verdict> back = verdicts_of(job);
  ASSERT_EQ(back.size(), judged.size()) << "the stored verdict takes its rule's place";
  EXPECT_EQ(back[0].evidence, "stored evidence");
  EXPECT_EQ(back[0].fix, "stored fix");
  EXPECT_EQ(back[0].tune, judged[0].tune) << "the settings of the rule that fired";

  job.verdict = JobVerdict{"busy", "judged by an older gpuenv", "nothing"};
  back = verdicts_of(job);
  ASSERT_EQ(back.size(), judged.size() + 1);
  EXPECT_EQ(back[0].name, "busy");
  EXPECT_EQ(back[1].name, "input-bound");
}

}  // namespace
}  // namespace gpuenv

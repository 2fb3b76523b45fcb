#include "decide/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "decide/run/precision_tune.h"
#include "decide/run/tune_search.h"
#include "model/hardware/clock_events.h"
#include "model/tune_profile.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

// Thresholds, named once; docs/feedback.md quotes them.
constexpr double kIdleUtilPct = 5;         // never above: idle
constexpr double kLowUtilPct = 60;         // below: the GPU waited for something
constexpr double kLoaderWaitShare = 0.1;   // below: the loop hardly waited for its DataLoader
constexpr double kBusyUtilPct = 85;        // at least: busy
constexpr double kCpuBoundCores = 0.8;     // a process this busy is CPU-bound
constexpr double kCopyBoundShare = 0.5;    // of the link, host to device
constexpr double kThermalShare = 0.1;      // of samples with a thermal reason
constexpr double kPowerCapShare = 0.25;    // of samples with the power-cap reason...
constexpr double kPowerCapClock = 0.85;    // ...while the SM clock is below this share of its max
constexpr double kHeadroomShare = 0.5;     // peak memory below this share of capacity
constexpr double kFullShare = 0.95;        // peak memory at least this share of capacity: nearly full
constexpr int kMinSamples = 5;


// What the rules read: the whole job, and its active part (the buckets where
// its processes held GPU memory: after CUDA started, before it ended).
struct Facts {
  const JobContext& c;
  const std::optional<JobSpeed>& speed;
  std::array<Stat, kMetricCount> all{}, active{};
  double active_s = 0;
  long long samples = 0;
  std::uint64_t events = 0;

  const Stat& a(Metric m) const { return active[m]; }
  bool has(Metric m) const { return active[m].n > 0; }
  double mean(Metric m, double fallback = 0) const { return has(m) ? active[m].mean : fallback; }

  double memory_capacity_mib() const {
    double total = 0;
    for (const auto& g : c.gpus) total += g.memory_total_mib.value_or(0);
    return total;
  }
  double link_mbs() const {
    double total = 0;
    for (const auto& g : c.gpus) total += pcie_link_mbs(g.pcie_gen.value_or(0), g.pcie_width.value_or(0));
    return total;
  }
  std::optional<double> max_sm_mhz() const {
    for (const auto& g : c.gpus)
      if (g.max_sm_mhz) return g.max_sm_mhz;
    return std::nullopt;
  }
};

bool held_memory(const TimelinePoint& p) { return p.s[kMemMib].n && p.s[kMemMib].max > 0; }
bool worked(const TimelinePoint& p) { return p.s[kUtilPct].n && p.s[kUtilPct].max > kIdleUtilPct; }

// The working part of the job: from the first bucket where the GPU did any
// work to the last, among those where the job held GPU memory. Start-up
// (imports, CUDA's context, building the model) and the end (saving) are
// left out, so a short job is judged by its training loop.
Facts facts(const JobContext& c, const Timeline& t, const std::optional<JobSpeed>& speed) {
  Facts f{c, speed};
  f.all = t.totals();
  bool mem_known = f.all[kMemMib].n > 0;
  const auto& points = t.points();
  // The hook's first step, when it saw one, is where the loop began: NVML's
  // utilisation trails by up to a second, so a GPU still busy with the job
  // before (a check, another run) would open the window during start-up.
  double loop_from = speed && speed->first_step_s ? *speed->first_step_s : 0;
  std::size_t first = points.size(), last = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    f.samples += points[i].samples;
    if (points[i].t1 < loop_from) continue;
    if (worked(points[i]) && (!mem_known || held_memory(points[i]))) first = std::min(first, i), last = i;
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const TimelinePoint& p = points[i];
    if (mem_known && !held_memory(p)) continue;
    if (first < points.size() && (i < first || i > last)) continue;
    for (int m = 0; m < kMetricCount; ++m) f.active[m].merge(p.s[m]);
    f.active_s += p.t1 - p.t0 + c.interval_s;
    f.events |= p.clock_events;
  }
  return f;
}

std::string util_phrase(const Facts& f) {
  if (!f.has(kUtilPct))  // never 0 % for a figure nobody gave
    return "NVML gave no utilisation of the GPU over " + fixed(f.active_s) +
           " s (it gives none of a MIG device, where GPM stands in from Hopper on)";
  return "the GPU was busy " + fixed(f.mean(kUtilPct)) + "% of the time over " + fixed(f.active_s) + " s";
}

std::optional<Verdict> idle(const Facts& f) {
  if (f.all[kUtilPct].n == 0 || f.all[kUtilPct].max > kIdleUtilPct) return std::nullopt;
  if (f.all[kMemMib].n && f.all[kMemMib].max > 0) return std::nullopt;
  Verdict v{"idle", "", "", {{"util_max_pct", f.all[kUtilPct].max}}, {}};
  double other = f.all[kOtherGpuMemMib].n ? f.all[kOtherGpuMemMib].max : 0;
  v.evidence = "utilisation never rose above " + fixed(f.all[kUtilPct].max) + "% and the job held no memory on the GPU";
  if (other > 0) {
    v.figures["other_gpu_mem_mib"] = other;
    v.evidence += ", but " + fixed(other) + " MiB on a GPU it was not given";
    v.fix = "the job used another GPU than the plan's: use cuda:0 under CUDA_VISIBLE_DEVICES (or cuda:LOCAL_RANK "
            "under torchrun) instead of a fixed device number";
  } else {
    v.fix = "the job never used the GPU: move the model and each batch .to(\"cuda\"), and check that "
            "torch.cuda.is_available() is True here (gpuenv doctor)";
  }
  return v;
}

// Held memory on the GPU and never used it: a session left open, a job
// waiting on something else, or more GPUs than it drives.
std::optional<Verdict> idle_held(const Facts& f) {
  if (f.all[kUtilPct].n == 0 || f.all[kUtilPct].max > kIdleUtilPct) return std::nullopt;
  if (!f.all[kMemMib].n || f.all[kMemMib].max <= 0) return std::nullopt;
  Verdict v{"idle-held", "", "", {{"util_max_pct", f.all[kUtilPct].max}, {"mem_mib", f.all[kMemMib].max}}, {}};
  v.evidence = "the job held " + fixed(f.all[kMemMib].max) + " MiB of GPU memory while utilisation never rose above " +
               fixed(f.all[kUtilPct].max) + "%";
  v.fix = "it holds a GPU it does not use: end the session or job that keeps it (a notebook kernel, a job waiting "
          "on something else), or ask for fewer GPUs";
  return v;
}

std::optional<Verdict> copy_bound(const Facts& f) {
  double link = f.link_mbs();
  if (!f.has(kPcieRxMBs) || link <= 0 || f.mean(kUtilPct, 100) >= kLowUtilPct) return std::nullopt;
  double rx = f.mean(kPcieRxMBs);
  if (rx < kCopyBoundShare * link) return std::nullopt;
  Verdict v{"copy-bound", "", "", {{"util_pct", f.mean(kUtilPct)}, {"pcie_rx_mbs", rx}, {"pcie_link_mbs", link}}, {}};
  v.evidence = util_phrase(f) + " while host-to-device copies ran at " + fixed(rx / 1000, 1) + " GB/s, " +
               fixed(100 * rx / link) + "% of the PCIe link (" + fixed(link / 1000, 1) + " GB/s)";
  v.fix = "copy less and overlap it: pin_memory=True with .to(device, non_blocking=True), send uint8 images and "
          "convert and normalise them on the GPU, keep a dataset that fits in GPU memory there";
  v.tune["pin_memory"] = "True";
  return v;
}

std::optional<Verdict> input_bound(const Facts& f) {
  if (!f.has(kUtilPct) || f.mean(kUtilPct) >= kLowUtilPct || !f.has(kTopCpuCores)) return std::nullopt;
  double top = f.mean(kTopCpuCores), tree = f.mean(kCpuCores), workers = f.mean(kWorkers);
  bool loader_bound = top >= kCpuBoundCores;
  bool workers_bound = workers >= 1 && tree >= kCpuBoundCores * (workers + 1);
  if (!loader_bound && !workers_bound) return std::nullopt;
  int target = suggested_workers(f.c.cpus_per_gpu);
  Verdict v{"input-bound", "", "",
            {{"util_pct", f.mean(kUtilPct)}, {"top_cpu_cores", top}, {"cpu_cores", tree}, {"workers", workers},
             {"suggested_workers", target}},
            {}};
  v.evidence = util_phrase(f) + " while its busiest process used " + fixed(top, 2) + " cores and " +
               fixed(workers, 0) + " worker processes ran (the job used " + fixed(tree, 1) + " cores in all)";
  // The job's own speed says where the CPU time went: a loop that never waited for a
  // DataLoader batch gains nothing from loader workers (and --tune sets none).
  if (f.speed && f.speed->steps > 0 && (f.speed->batches == 0 || f.speed->data_wait_share)) {
    double wait = f.speed->batches == 0 ? 0 : *f.speed->data_wait_share;
    v.figures["data_wait_share"] = wait;
    if (f.speed->batches == 0 || wait < kLoaderWaitShare) {
      v.evidence += f.speed->batches == 0
                        ? "; gpuenv's hook counted " + std::to_string(f.speed->steps) + " optimizer steps and no DataLoader batch"
                        : "; the loop waited for the next DataLoader batch only " + fixed(wait * 100) + "% of the time";
      v.fix = "the CPU work is in the training loop itself, not in loading data: find it with a profiler "
              "(torch.profiler, py-spy), move it to the GPU, or out of the step";
      return v;
    }
    v.evidence += "; the loop waited for the next DataLoader batch " + fixed(wait * 100) + "% of the time";
  }
  if (workers + 0.5 >= target) {
    v.fix = "its " + fixed(workers, 0) + " workers already use the " + fixed(target + 1) +
            " CPUs per GPU: make the per-sample work cheaper (decode and augment on the GPU, cache decoded data)";
    return v;
  }
  std::string cpus = f.c.cpus_per_gpu ? std::to_string(*f.c.cpus_per_gpu) + " CPUs per GPU here, one left for the loop"
                                      : std::string("CPUs per GPU unknown");
  v.tune = {{"num_workers", std::to_string(target)}, {"pin_memory", "True"}, {"persistent_workers", "True"}};
  // A --tune run whose script passed its own num_workers (the hook's report, issue 40): the
  // hook never overrides it, so only the script can; the settings it passed are not --tune's.
  TuneSettings own = parse_settings(f.c.script_settings);
  for (const auto& [name, value] : own) v.tune.erase(name);
  if (auto it = own.find("num_workers"); it != own.end()) {
    v.fix = "pass num_workers=" + std::to_string(target) + " to your DataLoader (" + cpus +
            "; gpuenv run --tune cannot: the script sets num_workers=" + it->second + " itself)";
    return v;
  }
  v.fix = "load batches in worker processes: DataLoader(num_workers=" + std::to_string(target) +
          ", pin_memory=True, persistent_workers=True) (" + cpus +
          "); gpuenv run --tune applies it without editing the script";
  return v;
}

double share(const Facts& f, Metric m) { return f.has(m) ? f.mean(m) : 0; }

std::string reasons_text(std::uint64_t events) {
  std::vector<std::string> names = clock_event_names(events & ~clock_event::kGpuIdle);
  return names.empty() ? "none named" : join(names, ", ");
}

std::optional<Verdict> thermal(const Facts& f) {
  double s = share(f, kThermal);
  if (s < kThermalShare) return std::nullopt;
  Verdict v{"throttled", "", "", {{"thermal_share", s}, {"sm_mhz", f.mean(kSmMhz)}}, {}};
  v.evidence = "clocks were held back for heat or by the hardware in " + fixed(100 * s) + "% of the samples (" +
               reasons_text(f.events) + "); SM clock " + fixed(f.mean(kSmMhz)) + " MHz on average";
  if (auto max = f.max_sm_mhz()) v.evidence += " of " + fixed(*max) + " MHz";
  v.fix = "check the cooling and the airflow (nvidia-smi -q -d TEMPERATURE,PERFORMANCE; gpuenv doctor): "
          "a cooled GPU keeps its clocks";
  return v;
}

std::optional<Verdict> power_capped(const Facts& f) {
  double s = share(f, kPowerCap);
  auto max = f.max_sm_mhz();
  if (s < kPowerCapShare || !max || !f.has(kSmMhz) || f.mean(kSmMhz) >= kPowerCapClock * *max) return std::nullopt;
  Verdict v{"throttled", "", "", {{"power_cap_share", s}, {"sm_mhz", f.mean(kSmMhz)}, {"power_w", f.mean(kPowerW)}}, {}};
  v.evidence = "the power limit held the clocks in " + fixed(100 * s) + "% of the samples: SM clock " +
               fixed(f.mean(kSmMhz)) + " of " + fixed(*max) + " MHz at " + fixed(f.mean(kPowerW)) + " W";
  v.fix = "the board's power limit sets the pace (nvidia-smi -q -d POWER); raise it with nvidia-smi -pl if the "
          "board and the facility allow, or expect these clocks";
  return v;
}

// ---- NVML GPM (Hopper and newer): what the SMs did while nvidia-smi said
// "busy". Where GPM gave nothing (before Hopper, MIG) these rules stay
// silent and busy says which signal it rests on.
constexpr double kTensorIdlePct = 5;    // tensor pipe below this: idle
constexpr double kFp32WorkPct = 20;     // FP32 pipe at least: the math runs on the CUDA cores
constexpr double kLowSmActivePct = 50;  // SMs busy below this while nvidia-smi says busy

bool has_gpm(const Facts& f) { return f.has(kSmActivePct); }

std::string gpm_phrase(const Facts& f) {
  if (!has_gpm(f))
    return " (by nvidia-smi's utilisation alone: this GPU gave no NVML GPM figures, as before Hopper or on a MIG "
           "device, so how busy its SMs and tensor cores were is unknown)";
  std::string p = "; NVML GPM: SMs busy " + fixed(f.mean(kSmActivePct)) + "%";
  if (f.has(kTensorActivePct)) p += ", tensor pipe " + fixed(f.mean(kTensorActivePct)) + "%";
  if (f.has(kFp32ActivePct)) p += ", FP32 pipe " + fixed(f.mean(kFp32ActivePct)) + "%";
  return p;
}

// What bench measured on this GPU for fp32, TF32 and bf16 GEMMs, if it did.
std::string measured_gemms(const JobContext& c, Verdict* v) {
  auto at = [&](const char* k) -> std::optional<double> {
    auto it = c.gemm_tflops.find(k);
    return it == c.gemm_tflops.end() ? std::nullopt : std::optional<double>(it->second);
  };
  std::optional<double> fp32 = at("fp32"), tf32 = at("tf32"), bf16 = at("bf16");
  if (!fp32 || (!tf32 && !bf16))
    return "; gpuenv bench has not measured this GPU's fp32 and TF32/bf16 GEMMs, so the gain here is not known "
           "(run gpuenv bench once)";
  std::string p = "; on this GPU gpuenv bench measured fp32 GEMMs at " + fixed(*fp32, 1) + " TFLOP/s";
  v->figures["gemm_fp32_tflops"] = *fp32;
  for (auto [name, key, x] : {std::tuple{"TF32", "gemm_tf32_tflops", tf32}, {"bf16", "gemm_bf16_tflops", bf16}}) {
    if (!x) continue;
    v->figures[key] = *x;
    p += ", " + std::string(name) + " at " + fixed(*x, 1) + (*fp32 > 0 ? " (" + fixed(*x / *fp32, 1) + "x)" : "");
  }
  return p;
}

std::optional<Verdict> fp32_on_cuda_cores(const Facts& f) {
  if (!f.has(kUtilPct) || f.mean(kUtilPct) < kBusyUtilPct || !f.has(kTensorActivePct) || !f.has(kFp32ActivePct))
    return std::nullopt;
  double tensor = f.mean(kTensorActivePct), fp32 = f.mean(kFp32ActivePct);
  if (tensor >= kTensorIdlePct || fp32 < kFp32WorkPct) return std::nullopt;
  Verdict v{"fp32-on-cuda-cores", "", "",
            {{"util_pct", f.mean(kUtilPct)}, {"tensor_active_pct", tensor}, {"fp32_active_pct", fp32},
             {"sm_active_pct", f.mean(kSmActivePct)}},
            {}};
  v.evidence = util_phrase(f) + " by nvidia-smi's utilisation, but NVML GPM saw its tensor cores idle (tensor pipe " +
               fixed(tensor, 1) + "%) while the FP32 pipe worked " + fixed(fp32) +
               "% of the time: the matrix math ran in full fp32 on the CUDA cores";
  v.fix = "let the matrix math use the tensor cores: torch.set_float32_matmul_precision(\"high\") (TF32) or "
          "torch.autocast(\"cuda\", dtype=torch.bfloat16); a script that asks for \"highest\" or sets allow_tf32 = "
          "False overrides gpuenv's TF32 setting" +
          measured_gemms(f.c, &v);
  v.fix += precision_suggestion(f.c);  // suggested, never applied
  return v;
}

std::optional<Verdict> low_sm_activity(const Facts& f) {
  if (!f.has(kUtilPct) || f.mean(kUtilPct) < kBusyUtilPct || !has_gpm(f)) return std::nullopt;
  double sm = f.mean(kSmActivePct);
  if (sm >= kLowSmActivePct) return std::nullopt;
  Verdict v{"low-sm-activity", "", "", {{"util_pct", f.mean(kUtilPct)}, {"sm_active_pct", sm}}, {}};
  v.evidence = util_phrase(f) + " by nvidia-smi's utilisation (a kernel was running), but NVML GPM saw only " +
               fixed(sm) + "% of its SMs busy";
  if (f.has(kSmOccupancyPct)) {
    v.figures["sm_occupancy_pct"] = f.mean(kSmOccupancyPct);
    v.evidence += " (occupancy " + fixed(f.mean(kSmOccupancyPct)) + "%)";
  }
  v.fix = "its kernels are too small to fill the GPU: a larger batch, fewer and larger kernels (torch.compile "
          "fuses small ones; CUDA graphs close the launch gaps), or share the GPU (MIG, MPS)";
  return v;
}

std::optional<Verdict> busy(const Facts& f) {
  if (!f.has(kUtilPct) || f.mean(kUtilPct) < kBusyUtilPct) return std::nullopt;
  Verdict v{"busy", util_phrase(f) + gpm_phrase(f), "nothing to gain here from the input pipeline or the clocks",
            {{"util_pct", f.mean(kUtilPct)}}, {}};
  v.fix += precision_suggestion(f.c);  // decide/run/precision_tune.h: suggested, never applied
  if (f.c.bf16_gain && f.c.precision.empty()) v.figures["bf16_gain"] = *f.c.bf16_gain;
  return v;
}

std::optional<Verdict> memory_headroom(const Facts& f) {
  double cap = f.memory_capacity_mib();
  if (!f.has(kMemMib) || cap <= 0 || f.mean(kUtilPct) < 20) return std::nullopt;
  double peak = f.a(kMemMib).max;
  if (peak <= 0 || peak >= kHeadroomShare * cap) return std::nullopt;
  int factor = int(std::clamp(0.9 * cap / peak, 2.0, 8.0));  // clamped as a double: cap / peak may be huge
  Verdict v{"memory-headroom", "", "", {{"peak_mem_mib", peak}, {"capacity_mib", cap}}, {}};
  v.evidence = "its GPU memory peaked at " + fixed(peak / 1024, 1) + " GiB of " + fixed(cap / 1024, 1) + " GiB (" +
               fixed(100 * peak / cap) + "%)";
  v.fix = "a larger batch fits: up to about " + std::to_string(factor) +
          "x the batch (activations grow with it; gpuenv plan-memory says which batch fits), with the learning "
          "rate scaled to match";
  return v;
}

std::optional<Verdict> memory_full(const Facts& f) {
  double cap = f.memory_capacity_mib();
  if (!f.all[kMemMib].n || cap <= 0) return std::nullopt;
  double peak = f.all[kMemMib].max;
  if (peak < kFullShare * cap) return std::nullopt;
  Verdict v{"memory-full", "", "", {{"peak_mem_mib", peak}, {"capacity_mib", cap}}, {}};
  v.evidence = "its GPU memory peaked at " + fixed(peak / 1024, 1) + " GiB of " + fixed(cap / 1024, 1) + " GiB (" +
               fixed(100 * peak / cap) + "%)";
  v.fix = "it runs at the edge of GPU memory, where the allocator retries and an out-of-memory error are near: "
          "gpuenv plan-memory says which batch fits; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, activation "
          "checkpointing or a smaller batch give room";
  return v;
}

}  // namespace

double pcie_link_mbs(int gen, int width) {
  std::optional<double> lane = pcie_lane_gbps(gen);
  return lane && width >= 1 ? std::round(*lane * 1000) * width : 0;
}

int suggested_workers(std::optional<int> cpus_per_gpu) {
  if (!cpus_per_gpu) return 4;
  return std::clamp(*cpus_per_gpu, 2, kMaxTuneWorkers + 1) - 1;  // clamped first: no overflow at INT_MIN
}

std::vector<Verdict> judge(const Job& job) { return judge(job.context, job.timeline, job.speed); }

JobVerdict to_job_verdict(const Verdict& v) { return {v.name, v.evidence, v.fix}; }

std::vector<Verdict> verdicts_of(const Job& job) {
  std::vector<Verdict> judged = judge(job);
  if (!job.verdict) return judged;
  std::vector<Verdict> out{{job.verdict->name, job.verdict->evidence, job.verdict->fix, {}, {}}};
  for (Verdict& v : judged) {
    if (v.name != out[0].name) out.push_back(std::move(v));
    else out[0].figures = std::move(v.figures), out[0].tune = std::move(v.tune);
  }
  return out;
}

JobVerdict main_verdict(const Job& job) { return job.verdict ? *job.verdict : to_job_verdict(judge(job)[0]); }

std::vector<Verdict> judge(const JobContext& context, const Timeline& timeline, const std::optional<JobSpeed>& speed) {
  Facts f = facts(context, timeline, speed);
  if (f.all[kUtilPct].n == 0 && !context.unwatched.empty())
    return {{"unwatched", "the GPUs were not sampled: " + context.unwatched, "nothing to judge", {}, {}}};
  if (f.samples < kMinSamples)
    return {{"too-short", "the job ran for " + std::to_string(f.samples) + " samples (" +
                              fixed(context.interval_s, 1) + " s apart)",
             "run it longer than " + std::to_string(kMinSamples) + " samples to get a verdict", {}, {}}};
  std::vector<Verdict> out;
  for (auto rule : {idle, idle_held, copy_bound, input_bound, thermal, fp32_on_cuda_cores, low_sm_activity,
                    memory_full, busy, power_capped, memory_headroom})
    if (auto v = rule(f)) out.push_back(std::move(*v));
  if (out.empty())
    out.push_back({"unclear", util_phrase(f) + "; no rule matched", "nothing to apply from this run",
                   f.has(kUtilPct) ? std::map<std::string, double>{{"util_pct", f.mean(kUtilPct)}}
                                   : std::map<std::string, double>{},
                   {}});
  return out;
}

}  // namespace gpuenv

// The fleet job report, text and JSON, of a summary made by hand: the whole
// text of a two-GPU Slurm job, the JSON's fields (null for what is unknown),
// a Kubernetes and a scheduler-less job's first line, and label values that
// would move a terminal's cursor made printable.
#include "act/render/fleet_job_report.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

using fleet::GpuUse;
using fleet::JobSummary;
constexpr double T0 = 1767225600;  // 2026-01-01T00:00:00Z

JobSummary slurm_job() {
  JobSummary s;
  s.job = "1001", s.scheduler = "slurm", s.user = "alice", s.nodes = {"gpu-a"};
  s.start = T0, s.end = T0 + 5400, s.gpu_hours = 3, s.energy_j = 2.16e6, s.energy_estimate = true;
  GpuUse g0;
  g0.node = "gpu-a", g0.gpu = "0", g0.uuid = "GPU-a0", g0.first = T0, g0.last = T0 + 5400, g0.held_s = 5400;
  g0.energy_j = 1.08e6, g0.utilization = 0.35, g0.utilization_max = 0.4, g0.sm_active = 0.3, g0.tensor_active = 0.01;
  g0.memory_peak_bytes = 12.5 * (1ull << 30);
  GpuUse g1 = g0;
  g1.gpu = "1", g1.uuid = "GPU-a1", g1.shared = true, g1.sm_active.reset(), g1.tensor_active.reset();
  s.gpus = {g0, g1};
  s.cpu = {{"gpu-a", 3.2, 16, 9}};
  s.verdicts = {{"gpu-a", T0, T0 + 300, "too-short", ""}, {"gpu-a", T0 + 300, T0 + 5400, "input-bound", "raise num_workers to 8"}};
  s.main_verdict = "input-bound", s.main_fix = "raise num_workers to 8", s.main_verdict_s = 5100;
  s.notes = {"GPU 1 on gpu-a was shared with another job: its energy and utilisation here are estimates."};
  return s;
}

const FleetReportSource kSource{"http://prom:9090", T0 - 14 * 86400, T0 + 86400};

TEST(FleetJobReport, Text) {
  EXPECT_EQ(render_fleet_job(slurm_job(), kSource),
            "Job 1001 (slurm), user alice\n"
            "  Prometheus  http://prom:9090, window 2025-12-18T00:00:00Z to 2026-01-02T00:00:00Z\n"
            "  Started     2026-01-01T00:00:00Z\n"
            "  Ended       2026-01-01T01:30:00Z (last sample)\n"
            "  Duration    1 h 30 min\n"
            "  Nodes       gpu-a\n"
            "  GPU-hours   3.00 on 2 GPUs\n"
            "  Energy      2,160 kJ (0.600 kWh), an estimate: a GPU was shared with another job\n"
            "  CPU         gpu-a: 3.2 of 16 cores used (20 %), 9 processes at most\n"
            "\n"
            "GPUs (mean utilisation and SM/tensor activity; SM and tensor need Hopper or later)\n"
            "  NODE   GPU  UUID    HELD        UTIL  SM    TENSOR  MEM PEAK  ENERGY\n"
            "  gpu-a  0    GPU-a0  1 h 30 min  35 %  30 %  1 %     12.5 GiB  1,080 kJ\n"
            "  gpu-a  1    GPU-a1  1 h 30 min  35 %  -     -       12.5 GiB  1,080 kJ (estimate)\n"
            "\n"
            "Verdicts\n"
            "  2026-01-01T00:00:00Z  to  2026-01-01T00:05:00Z  (5 min 00 s)  too-short\n"
            "  2026-01-01T00:05:00Z  to  2026-01-01T01:30:00Z  (1 h 25 min)  input-bound\n"
            "Main verdict: input-bound, 1 h 25 min\n"
            "  Fix: raise num_workers to 8\n"
            "\n"
            "Notes\n"
            "  * GPU 1 on gpu-a was shared with another job: its energy and utilisation here are estimates.\n");
}

TEST(FleetJobReport, Json) {
  nlohmann::json j = fleet_job_json(slurm_job(), kSource);
  EXPECT_EQ(j["job"], "1001");
  EXPECT_EQ(j["source"]["prometheus"], "http://prom:9090");
  EXPECT_EQ(j["source"]["window_end"], T0 + 86400);
  EXPECT_EQ(j["scheduler"], "slurm");
  EXPECT_TRUE(j["namespace"].is_null());
  EXPECT_TRUE(j["command"].is_null());
  EXPECT_EQ(j["start"], T0);
  EXPECT_EQ(j["duration_s"], 5400);
  EXPECT_EQ(j["gpu_hours"], 3);
  EXPECT_EQ(j["energy_j"], 2.16e6);
  EXPECT_DOUBLE_EQ(j["energy_kwh"].get<double>(), 0.6);
  EXPECT_EQ(j["energy_estimate"], true);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["uuid"], "GPU-a0");
  EXPECT_TRUE(j["gpus"][0]["mig"].is_null());
  EXPECT_EQ(j["gpus"][0]["gpu_hours"], 1.5);
  EXPECT_EQ(j["gpus"][1]["shared"], true);
  EXPECT_TRUE(j["gpus"][1]["sm_active"].is_null());
  EXPECT_TRUE(j["gpus"][1]["fp32_active"].is_null());
  EXPECT_EQ(j["cpu"][0], (nlohmann::json{{"node", "gpu-a"}, {"cores_used", 3.2}, {"cores_allowed", 16}, {"processes", 9}}));
  ASSERT_EQ(j["verdicts"].size(), 2u);
  EXPECT_EQ(j["verdicts"][1], (nlohmann::json{{"node", "gpu-a"}, {"from", T0 + 300}, {"to", T0 + 5400},
                                               {"duration_s", 5100}, {"verdict", "input-bound"},
                                               {"fix", "raise num_workers to 8"}}));
  EXPECT_EQ(j["main_verdict"], (nlohmann::json{{"verdict", "input-bound"}, {"duration_s", 5100},
                                                {"fix", "raise num_workers to 8"}}));
  EXPECT_EQ(j["notes"].size(), 1u);
}

TEST(FleetJobReport, UnknownsAreNull) {
  JobSummary s = slurm_job();
  s.energy_j.reset(), s.energy_estimate = false, s.main_verdict.clear(), s.verdicts.clear();
  nlohmann::json j = fleet_job_json(s, kSource);
  EXPECT_TRUE(j["energy_j"].is_null());
  EXPECT_TRUE(j["energy_kwh"].is_null());
  EXPECT_TRUE(j["main_verdict"].is_null());
  std::string text = render_fleet_job(s, kSource);
  EXPECT_NE(text.find("  Energy      unknown: no energy series (MIG devices and GPUs before Volta have none)\n"), std::string::npos);
  EXPECT_EQ(text.find("Verdicts"), std::string::npos);
}

TEST(FleetJobReport, FirstLineOfEachScheduler) {
  JobSummary k = slurm_job();
  k.job = "ml/train-0", k.scheduler = "kubernetes", k.ns = "ml", k.pod = "train-0", k.container = "trainer", k.user = "";
  EXPECT_EQ(render_fleet_job(k, kSource).substr(0, render_fleet_job(k, kSource).find('\n')),
            "Job ml/train-0 (kubernetes: pod ml/train-0, container trainer), user unknown");
  JobSummary n = slurm_job();
  n.job = "pid-4343", n.scheduler = "none", n.command = "python3";
  EXPECT_EQ(render_fleet_job(n, kSource).substr(0, render_fleet_job(n, kSource).find('\n')),
            "Job pid-4343 (no scheduler: command python3), user alice");
}

TEST(FleetJobReport, LabelValuesArePrintable) {
  JobSummary s = slurm_job();
  s.user = "eve\x1b]0;owned\a", s.gpus[0].node = "gpu-\x1b[2J", s.main_fix = "run \x9b" "1m";
  std::string text = render_fleet_job(s, kSource);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find('\a'), std::string::npos);
  EXPECT_NE(text.find("user eve\\x1b]0;owned\\x07"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpuenv

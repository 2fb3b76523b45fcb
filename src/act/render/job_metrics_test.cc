#include "act/render/job_metrics.h"

#include <gtest/gtest.h>

#include "metric_lines.h"

#include <sstream>

namespace gpuenv {
namespace {

using testing::lines_of;

fleet::JobView slurm_job_view() {
  fleet::JobView j;
  j.owner.scheduler = "slurm";
  j.owner.job = "1234";
  j.owner.user = "alice";
  fleet::JobGpuView g;
  g.uuid = "GPU-0";
  g.gpu = 0;
  g.gpu_seconds = 20;
  g.energy_joules = 12000;
  g.present = true;
  g.utilization = 0.9;
  g.tensor_active = 0.5;
  g.memory_bytes = 1024;
  g.memory_peak_bytes = 2048;
  j.gpus = {g};
  j.cpu_cores_used = 1.5;
  j.cpu_cores_allowed = 8;
  j.processes = 1;
  j.start_unix = 1.7e9;
  j.verdict.name = "input-bound";
  j.verdict.fix = "load batches in worker processes";
  return j;
}

ExporterInfo on_host(const std::string& hostname) {
  ExporterInfo info;
  info.hostname = hostname;
  return info;
}

const char* kJob = "job=\"1234\",user=\"alice\",scheduler=\"slurm\",hostname=\"node1\"";

TEST(JobMetrics, EverySeriesOfASlurmJob) {
  std::string text = prometheus::render(job_metric_families({slurm_job_view()}, on_host("node1")));
  std::string gpu = std::string(kJob) + ",gpu=\"0\",UUID=\"GPU-0\"";
  EXPECT_EQ(lines_of(text, "gpuenv_job_gpu_seconds_total"),
            std::vector<std::string>{"gpuenv_job_gpu_seconds_total{" + gpu + "} 20"});
  EXPECT_EQ(lines_of(text, "gpuenv_job_energy_joules_total"),
            std::vector<std::string>{"gpuenv_job_energy_joules_total{" + gpu + "} 12000"});
  EXPECT_EQ(lines_of(text, "gpuenv_job_gpu_shared"), std::vector<std::string>{"gpuenv_job_gpu_shared{" + gpu + "} 0"});
  EXPECT_EQ(lines_of(text, "gpuenv_job_tensor_active_ratio"),
            std::vector<std::string>{"gpuenv_job_tensor_active_ratio{" + gpu + "} 0.5"});
  EXPECT_TRUE(lines_of(text, "gpuenv_job_sm_active_ratio").empty()) << "unknown is absent, not 0";
  EXPECT_EQ(lines_of(text, "gpuenv_job_memory_peak_bytes"),
            std::vector<std::string>{"gpuenv_job_memory_peak_bytes{" + gpu + "} 2048"});
  EXPECT_EQ(lines_of(text, "gpuenv_job_cpu_cores_used"),
            std::vector<std::string>{"gpuenv_job_cpu_cores_used{" + std::string(kJob) + "} 1.5"});
  EXPECT_EQ(lines_of(text, "gpuenv_job_verdict"),
            std::vector<std::string>{"gpuenv_job_verdict{" + std::string(kJob) +
                                     ",verdict=\"input-bound\",fix=\"load batches in worker processes\"} 1"});
  EXPECT_NE(text.find("# TYPE gpuenv_job_gpu_seconds_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE gpuenv_job_energy_joules_total counter\n"), std::string::npos);
}

// The host label is the one the DCGM_FI_* series carry: export
// --hostname-label Hostname names it as dcgm-exporter did before 4.x.
TEST(JobMetrics, TheHostLabelFollowsTheDcgmSeries) {
  ExporterInfo info = on_host("node1");
  info.hostname_label = "Hostname";
  std::string text = prometheus::render(job_metric_families({slurm_job_view()}, info));
  EXPECT_EQ(lines_of(text, "gpuenv_job_processes"),
            std::vector<std::string>{"gpuenv_job_processes{job=\"1234\",user=\"alice\",scheduler=\"slurm\","
                                     "Hostname=\"node1\"} 1"});
  EXPECT_EQ(text.find("hostname="), std::string::npos);
}

// A job whose processes left keeps its counters and peak until it expires;
// its live gauges say nothing more.
TEST(JobMetrics, AnEndedJobKeepsItsTotals) {
  fleet::JobView j = slurm_job_view();
  j.ended = true;
  j.gpus[0].present = false;
  std::string text = prometheus::render(job_metric_families({j}, on_host("node1")));
  EXPECT_EQ(lines_of(text, "gpuenv_job_gpu_seconds_total").size(), 1u);
  EXPECT_TRUE(lines_of(text, "gpuenv_job_gpu_utilization_ratio").empty());
  EXPECT_TRUE(lines_of(text, "gpuenv_job_cpu_cores_used").empty());
  EXPECT_NE(lines_of(text, "gpuenv_job_memory_used_bytes")[0].find("} 0"), std::string::npos);
}

// Kubernetes jobs carry dcgm-exporter's pod labels, unwrapped jobs their
// command; a new job is too-short; label values are escaped.
TEST(JobMetrics, LabelsBySchedulerAndANewJob) {
  fleet::JobView k;
  k.owner.scheduler = "kubernetes";
  k.owner.job = "ml/trainer-0";
  k.owner.ns = "ml";
  k.owner.pod = "trainer-0";
  k.owner.container = "pytorch";
  fleet::JobView n;
  n.owner.scheduler = "none";
  n.owner.job = "pid-42";
  n.owner.user = "bob";
  n.owner.command = "py\"thon";
  std::vector<std::string> v =
      lines_of(prometheus::render(job_metric_families({k, n}, on_host(""))), "gpuenv_job_verdict");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0],
            "gpuenv_job_verdict{job=\"ml/trainer-0\",scheduler=\"kubernetes\",namespace=\"ml\",pod=\"trainer-0\","
            "container=\"pytorch\",verdict=\"too-short\",fix=\"\"} 1");
  EXPECT_EQ(v[1], "gpuenv_job_verdict{job=\"pid-42\",user=\"bob\",scheduler=\"none\",command=\"py\\\"thon\","
                  "verdict=\"too-short\",fix=\"\"} 1");
}

}  // namespace
}  // namespace gpuenv

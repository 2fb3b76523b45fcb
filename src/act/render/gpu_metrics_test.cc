#include "act/render/gpu_metrics.h"

#include <gtest/gtest.h>

#include "decide/export/counters_csv.h"
#include "metric_lines.h"

#include <set>

#include <sstream>

namespace gpuenv {
namespace {

using testing::lines_of;

// Every sample line (no # HELP / # TYPE).
std::vector<std::string> sample_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

DeviceReading h200(int index) {
  DeviceReading d;
  d.gpu = index;
  d.uuid = "GPU-" + std::to_string(index);
  d.name = "NVIDIA H200";
  d.pci_bus_id = "00000000:19:00.0";
  d.up = true;
  return d;
}

DeviceReading busy_h200() {
  DeviceReading d = h200(0);
  d.utilization_ratio = 0.75;
  d.memory_utilization_ratio = 0.4;
  d.memory_used_bytes = 4;
  d.memory_free_bytes = 5;
  d.memory_total_bytes = 10;
  d.health.temperature_c = 61;
  d.power_watts = 325.375;
  d.energy_joules = 1000.25;
  d.sm_clock_hz = 1980000000;
  d.memory_clock_hz = 3201000000;
  d.health.clock_events = 0x4;
  d.pcie_link_generation = 5;
  d.pcie_link_width = 16;
  d.pcie_replay_errors = 2;
  d.health.ecc_corrected = 3;
  d.health.ecc_uncorrected = 0;
  d.health.row_remap_correctable = 0;
  d.health.row_remap_uncorrectable = 1;
  d.health.row_remap_pending = true;
  d.health.row_remap_failure = false;
  d.nvlink_links_up = 18;
  d.nvlink_tx_bytes = 1024000;
  d.nvlink_rx_bytes = 2048000;
  return d;
}

// gpuenv's names only: what the tests of gpuenv's series read.
ExporterInfo gpuenv_only(const char* version = "0.1.0") {
  ExporterInfo info;
  info.version = version;
  info.dcgm_names = false;
  return info;
}

const char* kLabels = "gpu=\"0\",uuid=\"GPU-0\",name=\"NVIDIA H200\",pci_bus_id=\"00000000:19:00.0\"";

std::string with(const char* name, const std::string& extra, const char* value) {
  std::string l = std::string(name) + "{" + kLabels + extra + "} " + value;
  return l;
}

TEST(GpuMetrics, EveryReadingOfABusyGpuBecomesItsSeries) {
  Readings r;
  r.devices = {busy_h200()};
  std::vector<std::string> want = {
      with("gpuenv_gpu_up", "", "1"),
      with("gpuenv_gpu_utilization_ratio", "", "0.75"),
      with("gpuenv_gpu_memory_utilization_ratio", "", "0.4"),
      with("gpuenv_gpu_memory_used_bytes", "", "4"),
      with("gpuenv_gpu_memory_free_bytes", "", "5"),
      with("gpuenv_gpu_memory_total_bytes", "", "10"),
      with("gpuenv_gpu_temperature_celsius", "", "61"),
      with("gpuenv_gpu_power_watts", "", "325.375"),
      with("gpuenv_gpu_energy_joules_total", "", "1000.25"),
      with("gpuenv_gpu_sm_clock_hertz", "", "1980000000"),
      with("gpuenv_gpu_memory_clock_hertz", "", "3201000000"),
      with("gpuenv_gpu_clock_event_active", ",reason=\"gpu_idle\"", "0"),
      with("gpuenv_gpu_clock_event_active", ",reason=\"applications_clocks_setting\"", "0"),
      with("gpuenv_gpu_clock_event_active", ",reason=\"sw_power_cap\"", "1"),
      with("gpuenv_gpu_clock_event_active", ",reason=\"hw_slowdown\"", "0"),
      with("gpuenv_gpu_clock_event_active", ",reason=\"sync_boost\"", "0"),
      with("gpuenv_gpu_clock_event_active", ",reason=\"sw_thermal_slowdown\"", "0"),
      with("gpuenv_gpu_clock_event_active", ",reason=\"hw_thermal_slowdown\"", "0"),
      with("gpuenv_gpu_clock_event_active", ",reason=\"hw_power_brake_slowdown\"", "0"),
      with("gpuenv_gpu_clock_event_active", ",reason=\"display_clock_setting\"", "0"),
      with("gpuenv_gpu_pcie_link_generation", "", "5"),
      with("gpuenv_gpu_pcie_link_width", "", "16"),
      with("gpuenv_gpu_pcie_replay_errors_total", "", "2"),
      with("gpuenv_gpu_ecc_errors_total", ",type=\"corrected\"", "3"),
      with("gpuenv_gpu_ecc_errors_total", ",type=\"uncorrected\"", "0"),
      with("gpuenv_gpu_row_remap_total", ",type=\"correctable\"", "0"),
      with("gpuenv_gpu_row_remap_total", ",type=\"uncorrectable\"", "1"),
      with("gpuenv_gpu_row_remap_pending", "", "1"),
      with("gpuenv_gpu_row_remap_failed", "", "0"),
      with("gpuenv_gpu_nvlink_links_up", "", "18"),
      with("gpuenv_gpu_nvlink_data_bytes_total", ",direction=\"tx\"", "1024000"),
      with("gpuenv_gpu_nvlink_data_bytes_total", ",direction=\"rx\"", "2048000"),
      "gpuenv_build_info{version=\"0.1.0\"} 1",
      "gpuenv_exporter_scrape_age_seconds 0",
      "gpuenv_exporter_nvml_errors_total 0",
  };
  EXPECT_EQ(sample_lines(render_gpu_metrics(r, gpuenv_only(), 0)), want);
}

// Rows: the devices of one round, and the device series expected, both
// ways (nothing more, nothing less).
struct Row {
  const char* description;
  std::vector<DeviceReading> devices;
  std::vector<std::string> want;  // sample lines of gpuenv_gpu_* families
};

std::vector<std::string> device_lines(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& l : sample_lines(text))
    if (l.rfind("gpuenv_gpu_", 0) == 0) out.push_back(l);
  return out;
}

TEST(GpuMetrics, Table) {
  DeviceReading lost = h200(1);
  lost.up = false;
  DeviceReading nameless;
  nameless.gpu = 2;
  nameless.up = true;
  nameless.health.temperature_c = 40;
  DeviceReading mig;
  mig.gpu = 0;
  mig.mig = 1;
  mig.uuid = "MIG-a";
  mig.name = "NVIDIA A100-SXM4-80GB MIG 2g.20gb";
  mig.pci_bus_id = "00000000:07:00.0";
  mig.up = true;
  mig.memory_total_bytes = 20937965568;
  DeviceReading quoted = h200(3);
  quoted.name = "odd \"name\"\\\n";
  const std::string q = "gpu=\"3\",uuid=\"GPU-3\",name=\"odd \\\"name\\\"\\\\\\n\",pci_bus_id=\"00000000:19:00.0\"";
  std::vector<Row> rows = {
      {"a lost GPU says up 0 and nothing else, under the labels it had",
       {lost},
       {"gpuenv_gpu_up{gpu=\"1\",uuid=\"GPU-1\",name=\"NVIDIA H200\",pci_bus_id=\"00000000:19:00.0\"} 0"}},
      {"labels NVML did not give are left out; unknown values have no series",
       {nameless},
       {"gpuenv_gpu_up{gpu=\"2\"} 1", "gpuenv_gpu_temperature_celsius{gpu=\"2\"} 40"}},
      {"a MIG device adds its index",
       {mig},
       {"gpuenv_gpu_up{gpu=\"0\",mig=\"1\",uuid=\"MIG-a\",name=\"NVIDIA A100-SXM4-80GB MIG 2g.20gb\",pci_bus_id=\"00000000:07:00.0\"} 1",
        "gpuenv_gpu_memory_total_bytes{gpu=\"0\",mig=\"1\",uuid=\"MIG-a\",name=\"NVIDIA A100-SXM4-80GB MIG 2g.20gb\",pci_bus_id=\"00000000:07:00.0\"} 20937965568"}},
      {"label values are escaped", {quoted}, {"gpuenv_gpu_up{" + q + "} 1"}},
      {"the series of one family stay together, devices in order",
       {nameless, lost},
       {"gpuenv_gpu_up{gpu=\"2\"} 1",
        "gpuenv_gpu_up{gpu=\"1\",uuid=\"GPU-1\",name=\"NVIDIA H200\",pci_bus_id=\"00000000:19:00.0\"} 0",
        "gpuenv_gpu_temperature_celsius{gpu=\"2\"} 40"}},
      {"no GPUs: no device series", {}, {}},
  };
  for (const Row& row : rows) {
    Readings r;
    r.devices = row.devices;
    EXPECT_EQ(device_lines(render_gpu_metrics(r, gpuenv_only(), 0)), row.want) << row.description;
  }
}

TEST(GpuMetrics, ClockEventsAreOneSeriesPerReason) {
  Readings r;
  DeviceReading d = h200(0);
  d.health.clock_events = 0x60;  // sw and hw thermal slowdown
  r.devices = {d};
  std::vector<std::string> lines = lines_of(render_gpu_metrics(r, {}, 0), "gpuenv_gpu_clock_event_active");
  ASSERT_EQ(lines.size(), 9u);
  int active = 0;
  for (const std::string& l : lines) active += l.back() == '1';
  EXPECT_EQ(active, 2);
  EXPECT_EQ(lines[5], with("gpuenv_gpu_clock_event_active", ",reason=\"sw_thermal_slowdown\"", "1"));
  EXPECT_EQ(lines[6], with("gpuenv_gpu_clock_event_active", ",reason=\"hw_thermal_slowdown\"", "1"));
}

TEST(GpuMetrics, PlanBuildAgeAndErrors) {
  Readings r;
  r.sampled_at = 100;
  r.nvml_errors_total = 7;
  ExporterInfo info = gpuenv_only();
  info.plan = {{"NCCL_P2P_LEVEL", "NVL"}, {"TORCH_CUDA_ARCH_LIST", "9.0 \"x\""}};
  std::string text = render_gpu_metrics(r, info, 102.5);
  EXPECT_EQ(lines_of(text, "gpuenv_plan_info"),
            (std::vector<std::string>{"gpuenv_plan_info{setting=\"NCCL_P2P_LEVEL\",value=\"NVL\"} 1",
                                      "gpuenv_plan_info{setting=\"TORCH_CUDA_ARCH_LIST\",value=\"9.0 \\\"x\\\"\"} 1"}));
  EXPECT_EQ(lines_of(text, "gpuenv_build_info"), std::vector<std::string>{"gpuenv_build_info{version=\"0.1.0\"} 1"});
  EXPECT_EQ(lines_of(text, "gpuenv_exporter_scrape_age_seconds"),
            std::vector<std::string>{"gpuenv_exporter_scrape_age_seconds 2.5"});
  EXPECT_EQ(lines_of(text, "gpuenv_exporter_nvml_errors_total"),
            std::vector<std::string>{"gpuenv_exporter_nvml_errors_total 7"});
  EXPECT_NE(text.find("# TYPE gpuenv_exporter_nvml_errors_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE gpuenv_plan_info gauge\n"), std::string::npos);
}

TEST(GpuMetrics, CountersAreTypedCounterAndNamedTotal) {
  Readings r;
  r.devices = {busy_h200()};
  std::string text = render_gpu_metrics(r, {}, 0);
  for (const char* c : {"gpuenv_gpu_energy_joules_total", "gpuenv_gpu_pcie_replay_errors_total",
                        "gpuenv_gpu_ecc_errors_total", "gpuenv_gpu_row_remap_total"})
    EXPECT_NE(text.find(std::string("# TYPE ") + c + " counter\n"), std::string::npos) << c;
  EXPECT_NE(text.find("# TYPE gpuenv_gpu_up gauge\n"), std::string::npos);
}

// ---- dcgm-exporter's names ----

ExporterInfo dcgm_only() {
  ExporterInfo info;
  info.version = "0.1.0";
  info.gpuenv_names = false;
  info.hostname = "node-a";
  return info;
}

std::vector<std::string> dcgm_lines(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& l : sample_lines(text))
    if (l.rfind("DCGM_FI_", 0) == 0) out.push_back(l);
  return out;
}

const char* kDcgmLabels =
    "gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:19:00.0\",device=\"nvidia3\",modelName=\"NVIDIA H200\","
    "hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"580.95.05\"";

std::string dcgm(const char* name, const char* value) {
  return std::string(name) + "{" + kDcgmLabels + "} " + value;
}

TEST(GpuMetrics, DcgmExportersNamesUnitsAndLabels) {
  DeviceReading d = busy_h200();
  d.minor_number = 3;
  d.memory_used_bytes = 64428703744;     // 61444 MiB
  d.memory_free_bytes = 85716893696 + 5;  // whole MiB, rounded down: 81746
  d.memory_total_bytes = 150754820096;    // 143771 MiB
  d.memory_temperature_c = 52;
  d.xid_last = 79;
  d.xid_events = 2;
  d.gpm_gr_engine_active = 0.97;
  d.gpm_sm_active = 0.9;
  d.gpm_sm_occupancy = 0.25;
  d.gpm_tensor_active = 0.94;
  d.gpm_fp32_active = 0.01;
  d.gpm_fp16_active = 0;
  d.gpm_dram_active = 0.5;
  d.nvlink_bytes_per_second = 1999.0 * 1024 * 1000;  // DCGM's 1999 "MB/s", as KiB/s over 1000
  Readings r;
  r.devices = {d};
  r.driver_version = "580.95.05";
  std::vector<std::string> want = {
      dcgm("DCGM_FI_DEV_SM_CLOCK", "1980"),
      dcgm("DCGM_FI_DEV_MEM_CLOCK", "3201"),
      dcgm("DCGM_FI_DEV_MEMORY_TEMP", "52"),
      dcgm("DCGM_FI_DEV_GPU_TEMP", "61"),
      dcgm("DCGM_FI_DEV_POWER_USAGE", "325.375"),
      dcgm("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "1000250"),
      dcgm("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "2"),
      dcgm("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "1999"),
      dcgm("DCGM_FI_DEV_GPU_UTIL", "75"),
      dcgm("DCGM_FI_DEV_MEM_COPY_UTIL", "40"),
      std::string("DCGM_FI_DEV_XID_ERRORS{") + kDcgmLabels + ",err_code=\"79\",err_msg=\"GPU has fallen off the bus\"} 79",
      dcgm("DCGM_FI_DEV_FB_FREE", "81746"),
      dcgm("DCGM_FI_DEV_FB_USED", "61444"),
      dcgm("DCGM_FI_DEV_FB_TOTAL", "143771"),
      dcgm("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "3"),
      dcgm("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "0"),
      dcgm("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "1"),
      dcgm("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "0"),
      dcgm("DCGM_FI_DEV_ROW_REMAP_FAILURE", "0"),
      dcgm("DCGM_FI_DEV_ROW_REMAP_PENDING", "1"),
      dcgm("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "4"),
      dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.97"),
      dcgm("DCGM_FI_PROF_SM_ACTIVE", "0.9"),
      dcgm("DCGM_FI_PROF_SM_OCCUPANCY", "0.25"),
      dcgm("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "0.94"),
      dcgm("DCGM_FI_PROF_PIPE_FP32_ACTIVE", "0.01"),
      dcgm("DCGM_FI_PROF_PIPE_FP16_ACTIVE", "0"),
      dcgm("DCGM_FI_PROF_DRAM_ACTIVE", "0.5"),
  };
  // -f naming every field: each served, in the table's order, with its type.
  ExporterInfo every = dcgm_only();
  every.dcgm_counters = std::vector<DcgmCounter>{{"DCGM_FI_DRIVER_VERSION", "label", "Driver Version", 1}};
  const std::set<std::string> counters = {
      "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
      "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
      "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"};
  for (const std::string& line : want) {
    std::string name = line.substr(0, line.find('{'));
    every.dcgm_counters->push_back({name, counters.count(name) ? "counter" : "gauge", "", 2});
  }
  std::string text = render_gpu_metrics(r, every, 0);
  EXPECT_EQ(dcgm_lines(text), want);
  EXPECT_TRUE(device_lines(text).empty()) << "gpuenv's names were not asked for";
  for (const char* c : {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
                        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"})
    EXPECT_NE(text.find(std::string("# TYPE ") + c + " counter\n"), std::string::npos) << c;
  EXPECT_NE(text.find("# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"), std::string::npos);
}

TEST(GpuMetrics, WithoutACountersCsvDcgmExportersDefaultCountersAreServed) {
  DeviceReading d = busy_h200();
  d.gpm_gr_engine_active = d.gpm_sm_active = 0.5;
  Readings r;
  r.devices = {d};
  std::string text = render_gpu_metrics(r, dcgm_only(), 0);
  EXPECT_EQ(lines_of(text, "DCGM_FI_DEV_GPU_TEMP").size(), 1u);
  EXPECT_EQ(lines_of(text, "DCGM_FI_PROF_GR_ENGINE_ACTIVE").size(), 1u);
  for (const char* extra : {"DCGM_FI_DEV_FB_TOTAL", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_PROF_SM_ACTIVE",
                            "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"})
    EXPECT_EQ(text.find(extra), std::string::npos) << extra << " is commented out in default-counters.csv";
}

TEST(GpuMetrics, ACountersCsvChoosesTheFieldsTheirTypeAndHelpAndTheDriverLabel) {
  Readings r;
  r.devices = {busy_h200()};
  r.driver_version = "580.95.05";
  ExporterInfo info = dcgm_only();
  info.hostname_label = "Hostname";
  info.dcgm_counters = std::vector<DcgmCounter>{{"DCGM_FI_DEV_FB_TOTAL", "gauge", "Total framebuffer.", 1},
                                                {"DCGM_FI_DEV_GPU_TEMP", "counter", "", 2},
                                                {"DCGM_FI_DEV_GPU_UTIL", "histogram", "", 3}};
  std::string text = render_gpu_metrics(r, info, 0);
  std::vector<std::string> names;
  for (const std::string& l : dcgm_lines(text)) names.push_back(l.substr(0, l.find('{')));
  EXPECT_EQ(names, (std::vector<std::string>{"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_FB_TOTAL"}));  // the table's order
  EXPECT_NE(text.find("# HELP DCGM_FI_DEV_FB_TOTAL Total framebuffer.\n"), std::string::npos);
  EXPECT_NE(text.find("# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n# TYPE DCGM_FI_DEV_GPU_TEMP counter\n"),
            std::string::npos);
  EXPECT_NE(text.find("Hostname=\"node-a\"}"), std::string::npos);  // no DCGM_FI_DRIVER_VERSION line: no label
  info.dcgm_counters->push_back({"DCGM_FI_DRIVER_VERSION", "label", "", 4});
  EXPECT_NE(render_gpu_metrics(r, info, 0).find("Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"580.95.05\"}"),
            std::string::npos);
}

// export -f: the lines of a counters CSV (decide/export/counters_csv.h) that
// gpuenv cannot serve.
TEST(DcgmCounters, WhatGpuenvCannotServeIsNamedWithWhy) {
  std::vector<DcgmCounter> c;
  std::string err;
  ASSERT_TRUE(parse_dcgm_counters(
      "DCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_FI_DEV_FAN_SPEED, gauge, f\nDCGM_FI_DRIVER_VERSION, label, v\n"
      "DCGM_FI_DEV_COUNT, label, n\nDCGM_FI_DEV_POWER_USAGE, histogram, p\nDCGM_FI_DEV_GPU_TEMP, counter, again\n",
      &c, &err))
      << err;
  EXPECT_EQ(dcgm_unservable(c),
            (std::vector<std::string>{
                "DCGM_FI_DEV_FAN_SPEED (line 2): not a field gpuenv serves (docs/metrics.md, \"dcgm-exporter's "
                "names\", lists them)",
                "DCGM_FI_DEV_COUNT (line 4): a label field: gpuenv adds DCGM_FI_DRIVER_VERSION only",
                "DCGM_FI_DEV_POWER_USAGE (line 5): type histogram: gpuenv serves gauges and counters",
                "DCGM_FI_DEV_GPU_TEMP (line 6): listed again (line 1 counts)"}));
}

TEST(GpuMetrics, NvlinkBandwidthIsDcgmsTruncatedRateAndAbsentWithoutOne) {
  Readings r;
  r.devices = {busy_h200()};  // counters, but no rate yet (the first round)
  r.devices[0].minor_number = 3;
  r.driver_version = "580.95.05";
  std::string text = render_gpu_metrics(r, {}, 0);
  EXPECT_EQ(text.find("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{"), std::string::npos) << text;
  EXPECT_EQ(lines_of(text, "gpuenv_gpu_nvlink_data_bytes_total").size(), 2u);
  r.devices[0].nvlink_bytes_per_second = 1024.0 * 1000 - 1;  // just under DCGM's 1
  EXPECT_EQ(lines_of(render_gpu_metrics(r, dcgm_only(), 0), "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"),
            std::vector<std::string>{dcgm("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "0")});
  r.devices[0].nvlink_tx_bytes = r.devices[0].nvlink_rx_bytes = std::nullopt;  // a GPU without NVLink
  r.devices[0].nvlink_bytes_per_second = std::nullopt;
  text = render_gpu_metrics(r, {}, 0);
  EXPECT_EQ(text.find("NVLINK_BANDWIDTH_TOTAL{"), std::string::npos);
  EXPECT_EQ(text.find("gpuenv_gpu_nvlink_data_bytes_total{"), std::string::npos);
}

TEST(GpuMetrics, GpmRatiosAreAbsentNotZeroWhenUnsupported) {
  Readings r;
  r.devices = {busy_h200()};  // no GPM (an Ampere, or GPM not yet two samples)
  std::string text = render_gpu_metrics(r, {}, 0);
  EXPECT_EQ(text.find("DCGM_FI_PROF_"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpuenv_gpu_activity_ratio"), std::string::npos) << text;
  r.devices[0].gpm_tensor_active = 0;  // only this one answered
  text = render_gpu_metrics(r, {}, 0);
  EXPECT_EQ(lines_of(text, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE").size(), 1u);
  EXPECT_EQ(lines_of(text, "DCGM_FI_PROF_SM_ACTIVE").size(), 0u);
  EXPECT_EQ(lines_of(text, "gpuenv_gpu_activity_ratio"),
            std::vector<std::string>{with("gpuenv_gpu_activity_ratio", ",engine=\"tensor\"", "0")});
}

TEST(GpuMetrics, AMigDeviceHasItsGpusIdentityAndItsInstance) {
  DeviceReading gpu = h200(0);
  gpu.name = "NVIDIA A100-SXM4-80GB";
  gpu.minor_number = 0;
  gpu.health.temperature_c = 40;
  gpu.memory_used_bytes = 0;
  DeviceReading mig;
  mig.gpu = 0;
  mig.mig = 1;
  mig.uuid = "MIG-a";
  mig.name = "NVIDIA A100-SXM4-80GB MIG 2g.20gb";
  mig.mig_profile = "2g.20gb";
  mig.gpu_instance_id = 4;
  mig.minor_number = 0;
  mig.up = true;
  mig.memory_used_bytes = 20971520;
  mig.health.temperature_c = 40;     // NVML does not give one, but were it there: still the GPU's only
  mig.gpm_gr_engine_active = 0.5;
  Readings r;
  r.devices = {gpu, mig};
  const std::string g = "gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:19:00.0\",device=\"nvidia0\","
                        "modelName=\"NVIDIA A100-SXM4-80GB\",";
  EXPECT_EQ(dcgm_lines(render_gpu_metrics(r, dcgm_only(), 0)),
            (std::vector<std::string>{
                "DCGM_FI_DEV_GPU_TEMP{" + g + "hostname=\"node-a\"} 40",
                "DCGM_FI_DEV_FB_USED{" + g + "hostname=\"node-a\"} 0",
                "DCGM_FI_DEV_FB_USED{" + g + "GPU_I_PROFILE=\"2g.20gb\",GPU_I_ID=\"4\",hostname=\"node-a\"} 20",
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + g + "GPU_I_PROFILE=\"2g.20gb\",GPU_I_ID=\"4\",hostname=\"node-a\"} 0.5",
            }));
}

TEST(GpuMetrics, ALostGpuHasNoDcgmSeriesAndXidIsOnlyWhereWatched) {
  DeviceReading lost = h200(1);
  lost.up = false;
  DeviceReading unwatched = busy_h200();  // xid_last nullopt: events not supported
  Readings r;
  r.devices = {unwatched, lost};
  std::string text = render_gpu_metrics(r, {}, 0);
  EXPECT_EQ(text.find("DCGM_FI_DEV_XID_ERRORS"), std::string::npos);
  EXPECT_EQ(text.find("gpuenv_gpu_xid_"), std::string::npos);
  for (const std::string& l : dcgm_lines(text)) EXPECT_EQ(l.find("gpu=\"1\""), std::string::npos) << l;
  r.devices[0].xid_last = 0;  // watched, none yet: 0, as dcgm-exporter
  r.devices[0].xid_events = 0;
  text = render_gpu_metrics(r, {}, 0);
  EXPECT_EQ(lines_of(text, "DCGM_FI_DEV_XID_ERRORS").size(), 1u);
  EXPECT_EQ(lines_of(text, "gpuenv_gpu_xid_events_total"),
            std::vector<std::string>{with("gpuenv_gpu_xid_events_total", "", "0")});
}

TEST(GpuMetrics, TheKubeletsAssignmentsLabelTheirDevicesSeriesOnly) {
  DeviceReading gpu0 = h200(0), gpu1 = h200(1);
  gpu0.health.temperature_c = gpu1.health.temperature_c = 40;
  DeviceReading mig;
  mig.gpu = 1;
  mig.mig = 0;
  mig.uuid = "MIG-b";
  mig.mig_profile = "1g.18gb";
  mig.gpu_instance_id = 7;
  mig.up = true;
  mig.memory_used_bytes = 1048576;
  Readings r;
  r.devices = {gpu0, gpu1, mig};
  PodDevices pods;
  pods.add("nvidia.com/gpu", "GPU-0", {"train-0", "ml", "trainer"});
  pods.add("nvidia.com/mig-1g.18gb", "MIG-b", {"infer-2", "serve", "server"});
  ExporterInfo info;
  info.hostname = "node-a";
  std::string text = render_gpu_metrics(r, info, 0, pods);
  const std::string id1 = "UUID=\"GPU-1\",pci_bus_id=\"00000000:19:00.0\",modelName=\"NVIDIA H200\",";
  EXPECT_EQ(lines_of(text, "DCGM_FI_DEV_GPU_TEMP"),
            (std::vector<std::string>{
                "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:19:00.0\",modelName=\"NVIDIA "
                "H200\",hostname=\"node-a\",pod=\"train-0\",namespace=\"ml\",container=\"trainer\"} 40",
                "DCGM_FI_DEV_GPU_TEMP{gpu=\"1\"," + id1 + "hostname=\"node-a\"} 40"}));
  EXPECT_EQ(lines_of(text, "DCGM_FI_DEV_FB_USED"),
            std::vector<std::string>{"DCGM_FI_DEV_FB_USED{gpu=\"1\"," + id1 +
                                     "GPU_I_PROFILE=\"1g.18gb\",GPU_I_ID=\"7\",hostname=\"node-a\",pod=\"infer-2\","
                                     "namespace=\"serve\",container=\"server\"} 1"});
  EXPECT_EQ(lines_of(text, "gpuenv_gpu_temperature_celsius"),
            (std::vector<std::string>{
                "gpuenv_gpu_temperature_celsius{gpu=\"0\",uuid=\"GPU-0\",name=\"NVIDIA H200\",pci_bus_id=\""
                "00000000:19:00.0\",pod=\"train-0\",namespace=\"ml\",container=\"trainer\"} 40",
                "gpuenv_gpu_temperature_celsius{gpu=\"1\",uuid=\"GPU-1\",name=\"NVIDIA H200\",pci_bus_id=\""
                "00000000:19:00.0\"} 40"}));
  EXPECT_EQ(text.find("pod=\"", text.find("gpuenv_plan_info")), std::string::npos) << "only device series";
}

TEST(GpuMetrics, BothSetsByDefaultAndTheExportersOwnSeriesAlways) {
  Readings r;
  r.devices = {busy_h200()};
  ExporterInfo both;
  std::string text = render_gpu_metrics(r, both, 0);
  EXPECT_FALSE(device_lines(text).empty());
  EXPECT_FALSE(dcgm_lines(text).empty());
  ExporterInfo neither;
  neither.gpuenv_names = neither.dcgm_names = false;
  text = render_gpu_metrics(r, neither, 0);
  EXPECT_TRUE(device_lines(text).empty());
  EXPECT_TRUE(dcgm_lines(text).empty());
  EXPECT_EQ(lines_of(text, "gpuenv_exporter_nvml_errors_total").size(), 1u);
}

}  // namespace
}  // namespace gpuenv

namespace gpuenv {
namespace {

// A GPU two Slurm jobs share has its DCGM series once for each, with
// dcgm-exporter's hpc_job label; another GPU and gpuenv's own names have none.
TEST(GpuMetrics, SlurmJobsAreHpcJobLabelsOnTheDcgmSeries) {
  DeviceReading a = busy_h200(), b = busy_h200();
  b.gpu = 1;
  b.uuid = "GPU-1";
  Readings r;
  r.devices = {a, b};
  ExporterInfo info;
  std::string text = render_gpu_metrics(r, info, 0, PodDevices(), {{0, {"1234", "1235"}}});
  std::vector<std::string> util = lines_of(text, "DCGM_FI_DEV_GPU_UTIL");
  ASSERT_EQ(util.size(), 3u) << text;
  EXPECT_NE(util[0].find("UUID=\"GPU-0\""), std::string::npos);
  EXPECT_NE(util[0].find(",hpc_job=\"1234\"}"), std::string::npos) << util[0];
  EXPECT_NE(util[1].find(",hpc_job=\"1235\"}"), std::string::npos) << util[1];
  EXPECT_EQ(util[2].find("hpc_job"), std::string::npos) << util[2];
  for (const std::string& line : lines_of(text, "gpuenv_gpu_utilization_ratio"))
    EXPECT_EQ(line.find("hpc_job"), std::string::npos) << line;
}

// ---- dcgm-exporter's last default counters (issue 39, item 7) and NVLink errors.

DeviceReading media_h200() {
  DeviceReading d = busy_h200();
  d.minor_number = 3;
  d.encoder_utilization_ratio = 0.12;
  d.decoder_utilization_ratio = 0.5;
  d.memory_reserved_bytes = 540016640;  // 515 MiB
  d.pcie_tx_bytes_per_second = 1234567.75;
  d.pcie_rx_bytes_per_second = 0;
  return d;
}

TEST(GpuMetrics, EncoderDecoderReservedAndPcieUnderBothNames) {
  Readings r;
  r.devices = {media_h200()};
  r.driver_version = "580.95.05";
  ExporterInfo info = dcgm_only();
  info.gpuenv_names = true;
  std::string text = render_gpu_metrics(r, info, 0);
  EXPECT_EQ(lines_of(text, "gpuenv_gpu_encoder_utilization_ratio"),
            std::vector<std::string>{with("gpuenv_gpu_encoder_utilization_ratio", "", "0.12")});
  EXPECT_EQ(lines_of(text, "gpuenv_gpu_decoder_utilization_ratio"),
            std::vector<std::string>{with("gpuenv_gpu_decoder_utilization_ratio", "", "0.5")});
  EXPECT_EQ(lines_of(text, "gpuenv_gpu_memory_reserved_bytes"),
            std::vector<std::string>{with("gpuenv_gpu_memory_reserved_bytes", "", "540016640")});
  EXPECT_EQ(lines_of(text, "gpuenv_gpu_pcie_bytes_per_second"),
            (std::vector<std::string>{with("gpuenv_gpu_pcie_bytes_per_second", ",direction=\"tx\"", "1234567.75"),
                                      with("gpuenv_gpu_pcie_bytes_per_second", ",direction=\"rx\"", "0")}));
  // dcgm-exporter's default counters, in its units: %, MiB, whole bytes a second.
  EXPECT_EQ(lines_of(text, "DCGM_FI_DEV_ENC_UTIL"), std::vector<std::string>{dcgm("DCGM_FI_DEV_ENC_UTIL", "12")});
  EXPECT_EQ(lines_of(text, "DCGM_FI_DEV_DEC_UTIL"), std::vector<std::string>{dcgm("DCGM_FI_DEV_DEC_UTIL", "50")});
  EXPECT_EQ(lines_of(text, "DCGM_FI_DEV_FB_RESERVED"), std::vector<std::string>{dcgm("DCGM_FI_DEV_FB_RESERVED", "515")});
  EXPECT_EQ(lines_of(text, "DCGM_FI_PROF_PCIE_TX_BYTES"),
            std::vector<std::string>{dcgm("DCGM_FI_PROF_PCIE_TX_BYTES", "1234567")});
  EXPECT_EQ(lines_of(text, "DCGM_FI_PROF_PCIE_RX_BYTES"), std::vector<std::string>{dcgm("DCGM_FI_PROF_PCIE_RX_BYTES", "0")});
  EXPECT_NE(text.find("# TYPE DCGM_FI_PROF_PCIE_TX_BYTES gauge\n"), std::string::npos);
}

TEST(GpuMetrics, AValueNvmlDidNotGiveHasNoSeries) {
  Readings r;
  r.devices = {busy_h200()};  // no encoder, decoder, reserved memory, PCIe rate or NVLink errors
  ExporterInfo info = dcgm_only();
  info.gpuenv_names = true;
  std::string text = render_gpu_metrics(r, info, 0);
  for (const char* name : {"gpuenv_gpu_encoder_utilization_ratio", "gpuenv_gpu_decoder_utilization_ratio",
                           "gpuenv_gpu_memory_reserved_bytes", "gpuenv_gpu_pcie_bytes_per_second",
                           "gpuenv_gpu_nvlink_errors_total", "DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_DEC_UTIL",
                           "DCGM_FI_DEV_FB_RESERVED", "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES"})
    EXPECT_TRUE(lines_of(text, name).empty()) << name;
}

TEST(GpuMetrics, XidCarriesDcgmExportersErrCodeAndErrMsg) {
  DeviceReading d = h200(0);
  d.minor_number = 3;
  d.xid_last = 0;
  d.xid_events = 0;
  DeviceReading future = h200(1);
  future.xid_last = 999;  // past the table
  future.xid_events = 1;
  Readings r;
  r.devices = {d, future};
  std::vector<std::string> lines = lines_of(render_gpu_metrics(r, dcgm_only(), 0), "DCGM_FI_DEV_XID_ERRORS");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find(",err_code=\"0\",err_msg=\"No Error\"} 0"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(",err_code=\"999\",err_msg=\"Unknown Error\"} 999"), std::string::npos) << lines[1];
  // gpuenv's own Xid series keep their labels: the alerts count them per GPU.
  EXPECT_EQ(lines_of(render_gpu_metrics(r, gpuenv_only(), 0), "gpuenv_gpu_xid_last")[1],
            "gpuenv_gpu_xid_last{gpu=\"1\",uuid=\"GPU-1\",name=\"NVIDIA H200\",pci_bus_id=\"00000000:19:00.0\"} 999");
}

TEST(GpuMetrics, NvlinkErrorsPerLinkAndKindAndDcgmsTotalsOnlyWhenAsked) {
  DeviceReading d = busy_h200();
  d.minor_number = 3;
  d.nvlink_errors = {{0, 5, 1, 2, 0}, {3, 7, std::nullopt, 0, 0}};
  Readings r;
  r.devices = {d};
  r.driver_version = "580.95.05";
  std::string text = render_gpu_metrics(r, gpuenv_only(), 0);
  EXPECT_EQ(lines_of(text, "gpuenv_gpu_nvlink_errors_total"),
            (std::vector<std::string>{
                with("gpuenv_gpu_nvlink_errors_total", ",link=\"0\",kind=\"crc_flit\"", "5"),
                with("gpuenv_gpu_nvlink_errors_total", ",link=\"0\",kind=\"crc_data\"", "1"),
                with("gpuenv_gpu_nvlink_errors_total", ",link=\"0\",kind=\"replay\"", "2"),
                with("gpuenv_gpu_nvlink_errors_total", ",link=\"0\",kind=\"recovery\"", "0"),
                with("gpuenv_gpu_nvlink_errors_total", ",link=\"3\",kind=\"crc_flit\"", "7"),
                with("gpuenv_gpu_nvlink_errors_total", ",link=\"3\",kind=\"replay\"", "0"),
                with("gpuenv_gpu_nvlink_errors_total", ",link=\"3\",kind=\"recovery\"", "0")}));
  EXPECT_NE(text.find("# TYPE gpuenv_gpu_nvlink_errors_total counter\n"), std::string::npos);
  // Not in dcgm-exporter's default counters: none without -f ...
  EXPECT_EQ(render_gpu_metrics(r, dcgm_only(), 0).find("NVLINK_CRC"), std::string::npos);
  // ... and the sums over the links with it.
  ExporterInfo asked = dcgm_only();
  asked.dcgm_counters = std::vector<DcgmCounter>{{"DCGM_FI_DRIVER_VERSION", "label", "", 1}};
  for (const char* f : {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
                        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"})
    asked.dcgm_counters->push_back({f, "counter", "", 2});
  std::string dcgm_text = render_gpu_metrics(r, asked, 0);
  EXPECT_EQ(dcgm_lines(dcgm_text),
            (std::vector<std::string>{dcgm("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "12"),
                                      dcgm("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "1"),
                                      dcgm("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "2"),
                                      dcgm("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "0")}));
}

}  // namespace
}  // namespace gpuenv

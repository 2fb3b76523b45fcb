#include "act/render/gpu_metrics.h"

#include <cmath>
#include <functional>
#include <optional>
#include <string_view>

#include "model/hardware/clock_events.h"
#include "model/hardware/xid.h"

namespace gpuenv {
namespace {

using prometheus::MetricFamily;
using prometheus::Type;
using Getter = std::function<std::optional<double>(const DeviceReading&)>;

/// One series of a device family: an extra label (or none) and its value.
struct Series {
  std::string label, label_value;  // "" : no extra label
  Getter get;
};

struct DeviceMetric {
  const char* name;
  Type type;
  const char* help;
  std::vector<Series> series;
};

template <typename T>
std::optional<double> num(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

#define FIELD(f) [](const DeviceReading& d) { return num(d.f); }

Series one(Getter g) { return {"", "", std::move(g)}; }

std::vector<Series> clock_event_series() {
  std::vector<Series> out;
  for (const ClockEventBit& b : kClockEventBits) {
    std::uint64_t bit = b.bit;
    out.push_back({"reason", b.name, [bit](const DeviceReading& d) -> std::optional<double> {
                     if (!d.health.clock_events) return std::nullopt;
                     return (*d.health.clock_events & bit) ? 1.0 : 0.0;
                   }});
  }
  return out;
}

const std::vector<DeviceMetric>& device_metrics() {
  static const std::vector<DeviceMetric> kMetrics = {
      {"gpuenv_gpu_up", Type::kGauge, "1 when the device answered NVML this round, 0 when it is lost",
       {one([](const DeviceReading& d) { return std::optional<double>(d.up ? 1 : 0); })}},
      {"gpuenv_gpu_utilization_ratio", Type::kGauge,
       "Fraction of the last sample period a kernel ran (nvmlDeviceGetUtilizationRates)",
       {one(FIELD(utilization_ratio))}},
      {"gpuenv_gpu_memory_utilization_ratio", Type::kGauge,
       "Fraction of the last sample period device memory was read or written",
       {one(FIELD(memory_utilization_ratio))}},
      {"gpuenv_gpu_memory_used_bytes", Type::kGauge, "Device memory allocated",
       {one(FIELD(memory_used_bytes))}},
      {"gpuenv_gpu_memory_free_bytes", Type::kGauge, "Device memory free",
       {one(FIELD(memory_free_bytes))}},
      {"gpuenv_gpu_memory_total_bytes", Type::kGauge, "Device memory in all",
       {one(FIELD(memory_total_bytes))}},
      {"gpuenv_gpu_memory_reserved_bytes", Type::kGauge, "Device memory the driver reserves (nvmlMemory_v2_t.reserved)",
       {one(FIELD(memory_reserved_bytes))}},
      {"gpuenv_gpu_encoder_utilization_ratio", Type::kGauge,
       "Fraction of the last sample period the video encoder was busy", {one(FIELD(encoder_utilization_ratio))}},
      {"gpuenv_gpu_decoder_utilization_ratio", Type::kGauge,
       "Fraction of the last sample period the video decoder was busy", {one(FIELD(decoder_utilization_ratio))}},
      {"gpuenv_gpu_temperature_celsius", Type::kGauge, "GPU core temperature",
       {one(FIELD(health.temperature_c))}},
      {"gpuenv_gpu_power_watts", Type::kGauge, "Power draw", {one(FIELD(power_watts))}},
      {"gpuenv_gpu_energy_joules_total", Type::kCounter, "Energy used since the driver loaded",
       {one(FIELD(energy_joules))}},
      {"gpuenv_gpu_sm_clock_hertz", Type::kGauge, "Current SM clock", {one(FIELD(sm_clock_hz))}},
      {"gpuenv_gpu_memory_clock_hertz", Type::kGauge, "Current memory clock",
       {one(FIELD(memory_clock_hz))}},
      {"gpuenv_gpu_clock_event_active", Type::kGauge,
       "1 while this reason holds the clocks back (nvmlClocksEventReasons)", clock_event_series()},
      {"gpuenv_gpu_pcie_link_generation", Type::kGauge, "Current PCIe link generation",
       {one(FIELD(pcie_link_generation))}},
      {"gpuenv_gpu_pcie_link_width", Type::kGauge, "Current PCIe link width (lanes)",
       {one(FIELD(pcie_link_width))}},
      {"gpuenv_gpu_pcie_replay_errors_total", Type::kCounter, "PCIe replays (link-level retransmissions)",
       {one(FIELD(pcie_replay_errors))}},
      {"gpuenv_gpu_pcie_bytes_per_second", Type::kGauge,
       "PCIe traffic, headers and payload (NVML GPM on Hopper and later, else nvmlDeviceGetPcieThroughput)",
       {{"direction", "tx", FIELD(pcie_tx_bytes_per_second)}, {"direction", "rx", FIELD(pcie_rx_bytes_per_second)}}},
      {"gpuenv_gpu_ecc_errors_total", Type::kCounter, "ECC memory errors since the driver loaded",
       {{"type", "corrected", FIELD(health.ecc_corrected)}, {"type", "uncorrected", FIELD(health.ecc_uncorrected)}}},
      {"gpuenv_gpu_row_remap_total", Type::kCounter, "Memory rows remapped",
       {{"type", "correctable", FIELD(health.row_remap_correctable)},
        {"type", "uncorrectable", FIELD(health.row_remap_uncorrectable)}}},
      {"gpuenv_gpu_row_remap_pending", Type::kGauge, "1 when a row remap waits for a GPU reset",
       {one(FIELD(health.row_remap_pending))}},
      {"gpuenv_gpu_row_remap_failed", Type::kGauge, "1 when a row remap failed: no spare rows left",
       {one(FIELD(health.row_remap_failure))}},
      {"gpuenv_gpu_nvlink_links_up", Type::kGauge, "NVLink links active",
       {one(FIELD(nvlink_links_up))}},
      {"gpuenv_gpu_nvlink_data_bytes_total", Type::kCounter,
       "NVLink data over all links since the driver loaded, without protocol overhead",
       {{"direction", "tx", FIELD(nvlink_tx_bytes)}, {"direction", "rx", FIELD(nvlink_rx_bytes)}}},
  };
  return kMetrics;
}

// GPM's ratios under gpuenv's name: one series per engine.
std::vector<Series> activity_series() {
  using Ratio = std::optional<double> DeviceReading::*;
  static const std::pair<const char*, Ratio> kEngines[] = {
      {"graphics", &DeviceReading::gpm_gr_engine_active}, {"sm", &DeviceReading::gpm_sm_active},
      {"sm_occupancy", &DeviceReading::gpm_sm_occupancy},   {"tensor", &DeviceReading::gpm_tensor_active},
      {"fp32", &DeviceReading::gpm_fp32_active},            {"fp16", &DeviceReading::gpm_fp16_active},
      {"dram", &DeviceReading::gpm_dram_active}};
  std::vector<Series> out;
  for (const auto& [engine, field] : kEngines)
    out.push_back({"engine", engine, [f = field](const DeviceReading& d) { return d.*f; }});
  return out;
}

const std::vector<DeviceMetric>& xid_metrics() {
  static const std::vector<DeviceMetric> kMetrics = {
      {"gpuenv_gpu_xid_last", Type::kGauge,
       "The last Xid error the GPU raised since the exporter started; 0 none (NVML events)",
       {one(FIELD(xid_last))}},
      {"gpuenv_gpu_xid_events_total", Type::kCounter, "Xid errors the GPU raised since the exporter started",
       {one(FIELD(xid_events))}},
      {"gpuenv_gpu_activity_ratio", Type::kGauge,
       "Fraction of the last interval the engine was busy (NVML GPM on Hopper and later; DCGM before Hopper "
       "where it is installed)",
       activity_series()},
  };
  return kMetrics;
}

// dcgm-exporter's fields (etc/default-counters.csv of NVIDIA/dcgm-exporter
// and DCGM's field list), in its units. default_counter: the field is
// enabled (not commented out) in dcgm-exporter 4.x's etc/default-counters.csv.
// whole_gpu: a MIG device has no series of it (its GPU's is the one).
struct DcgmMetric {
  const char* name;
  Type type;
  bool default_counter;
  const char* help;
  Getter get;
  bool whole_gpu = true;
  /// Labels its series carry besides the device's (dcgm-exporter's err_code
  /// and err_msg on DCGM_FI_DEV_XID_ERRORS); null: none.
  std::function<prometheus::Labels(const DeviceReading&)> more_labels = nullptr;
};

constexpr bool kDefault = true;   // in dcgm-exporter's default counters
constexpr bool kExtra = false;    // a DCGM field it leaves commented out

std::optional<double> times(std::optional<double> v, double k) {
  if (!v) return std::nullopt;
  return *v * k;
}

std::optional<double> mib(const std::optional<std::uint64_t>& bytes) {
  if (!bytes) return std::nullopt;
  return static_cast<double>(*bytes >> 20);
}

std::optional<double> mhz(const std::optional<std::uint64_t>& hz) {
  if (!hz) return std::nullopt;
  return static_cast<double>(*hz / 1000000);
}

// DCGM's NVLink bandwidth: KiB both ways a second, over 1000 (DCGM's
// "MB/s"), truncated to its integer field.
std::optional<double> dcgm_nvlink(const std::optional<double>& bytes_per_second) {
  if (!bytes_per_second) return std::nullopt;
  return std::floor(*bytes_per_second / 1024 / 1000);
}

#define RATIO(f) [](const DeviceReading& d) { return d.f; }

// dcgm-exporter's labels of the last Xid: its code and description.
prometheus::Labels xid_labels(const DeviceReading& d) {
  std::uint64_t xid = d.xid_last.value_or(0);
  return {{"err_code", std::to_string(xid)}, {"err_msg", xid_description(xid)}};
}

// One of an NVLink's error counters, summed over the GPU's links
// (DCGM's *_ERROR_COUNT_TOTAL); none when no link gave it.
std::optional<double> nvlink_error_total(const DeviceReading& d, std::optional<std::uint64_t> NvlinkErrors::*kind) {
  std::optional<double> sum;
  for (const NvlinkErrors& e : d.nvlink_errors)
    if (e.*kind) sum = sum.value_or(0) + static_cast<double>(*(e.*kind));
  return sum;
}

// DCGM's PCIe fields are whole bytes a second.
std::optional<double> whole(const std::optional<double>& v) {
  if (!v) return std::nullopt;
  return std::floor(*v);
}

#define NVLINK_ERRORS(kind) [](const DeviceReading& d) { return nvlink_error_total(d, &NvlinkErrors::kind); }

const std::vector<DcgmMetric>& dcgm_metrics() {
  static const std::vector<DcgmMetric> kMetrics = {
      {"DCGM_FI_DEV_SM_CLOCK", Type::kGauge, kDefault, "SM clock frequency (in MHz).",
       [](const DeviceReading& d) { return mhz(d.sm_clock_hz); }},
      {"DCGM_FI_DEV_MEM_CLOCK", Type::kGauge, kDefault, "Memory clock frequency (in MHz).",
       [](const DeviceReading& d) { return mhz(d.memory_clock_hz); }},
      {"DCGM_FI_DEV_MEMORY_TEMP", Type::kGauge, kDefault, "Memory temperature (in C).", FIELD(memory_temperature_c)},
      {"DCGM_FI_DEV_GPU_TEMP", Type::kGauge, kDefault, "GPU temperature (in C).", FIELD(health.temperature_c)},
      {"DCGM_FI_DEV_POWER_USAGE", Type::kGauge, kDefault, "Power draw (in W).", FIELD(power_watts)},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Type::kCounter, kDefault, "Total energy consumption since boot (in mJ).",
       [](const DeviceReading& d) { return times(d.energy_joules, 1000); }},
      {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", Type::kCounter, kDefault, "Total number of PCIe retries.",
       FIELD(pcie_replay_errors)},
      // dcgm-exporter types it a counter though DCGM serves a rate: kept as theirs.
      {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", Type::kCounter, kDefault, "Total number of NVLink bandwidth counters for all lanes.",
       [](const DeviceReading& d) { return dcgm_nvlink(d.nvlink_bytes_per_second); }},
      // Commented out in dcgm-exporter's default counters: served with -f only.
      {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", Type::kCounter, kExtra,
       "Total number of NVLink flow-control CRC errors.", NVLINK_ERRORS(crc_flit)},
      {"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", Type::kCounter, kExtra,
       "Total number of NVLink data CRC errors.", NVLINK_ERRORS(crc_data)},
      {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", Type::kCounter, kExtra, "Total number of NVLink retries.",
       NVLINK_ERRORS(replay)},
      {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", Type::kCounter, kExtra,
       "Total number of NVLink recovery errors.", NVLINK_ERRORS(recovery)},
      {"DCGM_FI_DEV_GPU_UTIL", Type::kGauge, kDefault, "GPU utilization (in %).",
       [](const DeviceReading& d) { return times(d.utilization_ratio, 100); }},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", Type::kGauge, kDefault, "Memory utilization (in %).",
       [](const DeviceReading& d) { return times(d.memory_utilization_ratio, 100); }},
      {"DCGM_FI_DEV_ENC_UTIL", Type::kGauge, kDefault, "Encoder utilization (in %).",
       [](const DeviceReading& d) { return times(d.encoder_utilization_ratio, 100); }},
      {"DCGM_FI_DEV_DEC_UTIL", Type::kGauge, kDefault, "Decoder utilization (in %).",
       [](const DeviceReading& d) { return times(d.decoder_utilization_ratio, 100); }},
      {"DCGM_FI_DEV_XID_ERRORS", Type::kGauge, kDefault, "Value of the last XID error encountered.", FIELD(xid_last),
       true, xid_labels},
      {"DCGM_FI_DEV_FB_FREE", Type::kGauge, kDefault, "Framebuffer memory free (in MiB).",
       [](const DeviceReading& d) { return mib(d.memory_free_bytes); }, false},
      {"DCGM_FI_DEV_FB_USED", Type::kGauge, kDefault, "Framebuffer memory used (in MiB).",
       [](const DeviceReading& d) { return mib(d.memory_used_bytes); }, false},
      {"DCGM_FI_DEV_FB_RESERVED", Type::kGauge, kDefault, "Framebuffer memory reserved (in MiB).",
       [](const DeviceReading& d) { return mib(d.memory_reserved_bytes); }, false},
      {"DCGM_FI_DEV_FB_TOTAL", Type::kGauge, kExtra, "Framebuffer memory total (in MiB).",
       [](const DeviceReading& d) { return mib(d.memory_total_bytes); }, false},
      {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", Type::kCounter, kExtra, "Total number of single-bit volatile ECC errors.",
       FIELD(health.ecc_corrected)},
      {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", Type::kCounter, kExtra, "Total number of double-bit volatile ECC errors.",
       FIELD(health.ecc_uncorrected)},
      {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", Type::kCounter, kDefault,
       "Number of remapped rows for uncorrectable errors", FIELD(health.row_remap_uncorrectable)},
      {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", Type::kCounter, kDefault, "Number of remapped rows for correctable errors",
       FIELD(health.row_remap_correctable)},
      {"DCGM_FI_DEV_ROW_REMAP_FAILURE", Type::kGauge, kDefault, "Whether remapping of rows has failed",
       FIELD(health.row_remap_failure)},
      {"DCGM_FI_DEV_ROW_REMAP_PENDING", Type::kGauge, kExtra, "Whether a row remapping waits for a GPU reset",
       FIELD(health.row_remap_pending)},
      {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Type::kGauge, kExtra,
       "Current clock event reasons (bitmask of nvmlClocksEventReasons)", FIELD(health.clock_events)},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", Type::kGauge, kDefault, "Ratio of time the graphics engine is active.",
       RATIO(gpm_gr_engine_active), false},
      {"DCGM_FI_PROF_SM_ACTIVE", Type::kGauge, kExtra,
       "The ratio of cycles an SM has at least 1 warp assigned.", RATIO(gpm_sm_active), false},
      {"DCGM_FI_PROF_SM_OCCUPANCY", Type::kGauge, kExtra,
       "The ratio of number of warps resident on an SM.", RATIO(gpm_sm_occupancy), false},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", Type::kGauge, kDefault,
       "Ratio of cycles the tensor (HMMA) pipe is active.", RATIO(gpm_tensor_active), false},
      {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", Type::kGauge, kExtra, "Ratio of cycles the fp32 pipes are active.",
       RATIO(gpm_fp32_active), false},
      {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", Type::kGauge, kExtra, "Ratio of cycles the fp16 pipes are active.",
       RATIO(gpm_fp16_active), false},
      {"DCGM_FI_PROF_DRAM_ACTIVE", Type::kGauge, kDefault, "Ratio of cycles the device memory interface is active.",
       RATIO(gpm_dram_active), false},
      // dcgm-exporter 4.x's default counters type these gauges (the rate DCGM serves).
      {"DCGM_FI_PROF_PCIE_TX_BYTES", Type::kGauge, kDefault,
       "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in "
       "bytes per second.",
       [](const DeviceReading& d) { return whole(d.pcie_tx_bytes_per_second); }},
      {"DCGM_FI_PROF_PCIE_RX_BYTES", Type::kGauge, kDefault,
       "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in "
       "bytes per second.",
       [](const DeviceReading& d) { return whole(d.pcie_rx_bytes_per_second); }},
  };
  return kMetrics;
}

#undef NVLINK_ERRORS
#undef RATIO
#undef FIELD

MetricFamily device_family(const DeviceMetric& m, const std::vector<DeviceReading>& devices,
                     const std::vector<prometheus::Labels>& labels) {
  MetricFamily f{m.name, m.type, m.help, {}};
  for (std::size_t i = 0; i < devices.size(); ++i)
    for (const Series& s : m.series)
      if (std::optional<double> v = s.get(devices[i])) {
        prometheus::Labels l = labels[i];
        if (!s.label.empty()) l.emplace_back(s.label, s.label_value);
        f.samples.push_back({std::move(l), *v});
      }
  return f;
}

// labels[i]: device i's label sets (one a Slurm job on it, as dcgm-exporter's hpc_job).
MetricFamily dcgm_family(const DcgmMetric& m, const std::vector<DeviceReading>& devices,
                   const std::vector<std::vector<prometheus::Labels>>& labels) {
  MetricFamily f{m.name, m.type, m.help, {}};
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (!(m.whole_gpu && devices[i].mig))
      if (std::optional<double> v = m.get(devices[i]))
        for (prometheus::Labels l : labels[i]) {
          if (m.more_labels) for (auto& extra : m.more_labels(devices[i])) l.push_back(std::move(extra));
          f.samples.push_back({std::move(l), *v});
        }
  return f;
}

// gpuenv_gpu_nvlink_errors_total: one series per active link and kind of error.
MetricFamily nvlink_error_family(const std::vector<DeviceReading>& devices,
                                 const std::vector<prometheus::Labels>& labels) {
  static constexpr std::pair<const char*, std::optional<std::uint64_t> NvlinkErrors::*> kKinds[] = {
      {"crc_flit", &NvlinkErrors::crc_flit}, {"crc_data", &NvlinkErrors::crc_data},
      {"replay", &NvlinkErrors::replay},     {"recovery", &NvlinkErrors::recovery}};
  MetricFamily f{"gpuenv_gpu_nvlink_errors_total", Type::kCounter,
                 "NVLink errors on the link since the driver loaded (nvmlDeviceGetNvLinkErrorCounter)", {}};
  for (std::size_t i = 0; i < devices.size(); ++i)
    for (const NvlinkErrors& e : devices[i].nvlink_errors)
      for (const auto& [kind, field] : kKinds)
        if (e.*field) {
          prometheus::Labels l = labels[i];
          l.emplace_back("link", std::to_string(e.link));
          l.emplace_back("kind", kind);
          f.samples.push_back({std::move(l), static_cast<double>(*(e.*field))});
        }
  return f;
}

MetricFamily plan_family(const ExporterInfo& info) {
  MetricFamily f{"gpuenv_plan_info", Type::kGauge, "The environment gpuenv decided for this machine at start (1)",
           {}};
  for (const auto& [setting, value] : info.plan) f.samples.push_back({{{"setting", setting}, {"value", value}}, 1});
  return f;
}

// dcgm-exporter's pod, namespace and container, where the kubelet assigned d.
void add_pod_labels(const DeviceReading& d, const std::vector<DeviceReading>& devices, const PodDevices& pods,
                    prometheus::Labels* l) {
  if (pods.empty()) return;
  const PodRef* p = pods.find(d, mig_parent(devices, d));
  if (!p) return;
  l->emplace_back("pod", p->pod);
  l->emplace_back("namespace", p->ns);
  l->emplace_back("container", p->container);
}

void gpuenv_families(const Readings& r, const PodDevices& pods, std::vector<MetricFamily>* out) {
  std::vector<prometheus::Labels> labels;
  for (const DeviceReading& d : r.devices) {
    labels.push_back(device_labels(d));
    add_pod_labels(d, r.devices, pods, &labels.back());
  }
  for (const DeviceMetric& m : device_metrics()) out->push_back(device_family(m, r.devices, labels));
  out->push_back(nvlink_error_family(r.devices, labels));
  for (const DeviceMetric& m : xid_metrics()) out->push_back(device_family(m, r.devices, labels));
}

// Device i's label sets: one, or one for each Slurm job `hpc_jobs` has on it.
std::vector<prometheus::Labels> with_hpc_jobs(prometheus::Labels l, std::size_t i, const HpcJobs& hpc_jobs) {
  auto jobs = hpc_jobs.find(i);
  if (jobs == hpc_jobs.end() || jobs->second.empty()) return {std::move(l)};
  std::vector<prometheus::Labels> out;
  for (const std::string& job : jobs->second) {
    out.push_back(l);
    out.back().emplace_back("hpc_job", job);
  }
  return out;
}

// The counters CSV's line for `field` that gpuenv serves, or nullptr.
const DcgmCounter* csv_line(const std::vector<DcgmCounter>& counters, std::string_view field) {
  for (const DcgmCounter& c : counters)
    if (c.field == field) return (c.type == "gauge" || c.type == "counter") ? &c : nullptr;  // the first line counts
  return nullptr;
}

// Whether `m` is served: without -f, when it is one of dcgm-exporter's
// default counters; with it, when its line says so, with that line's type
// and help in *f.
bool select_dcgm(const DcgmMetric& m, const ExporterInfo& info, MetricFamily* f) {
  if (!info.dcgm_counters) return m.default_counter;
  const DcgmCounter* c = csv_line(*info.dcgm_counters, m.name);
  if (!c) return false;
  f->type = c->type == "counter" ? Type::kCounter : Type::kGauge;
  if (!c->help.empty()) f->help = c->help;
  return true;
}

// DCGM_FI_DRIVER_VERSION is a label dcgm-exporter adds when its CSV lists it
// as one (its default counters do).
std::optional<std::string> driver_label(const Readings& r, const ExporterInfo& info) {
  if (!info.dcgm_counters) return r.driver_version;
  for (const DcgmCounter& c : *info.dcgm_counters)
    if (c.field == "DCGM_FI_DRIVER_VERSION" && c.type == "label") return r.driver_version;
  return std::nullopt;
}

void dcgm_families(const Readings& r, const ExporterInfo& info, const PodDevices& pods, const HpcJobs& hpc_jobs,
                   std::vector<MetricFamily>* out) {
  std::vector<std::vector<prometheus::Labels>> labels;
  std::optional<std::string> driver = driver_label(r, info);
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    const DeviceReading& d = r.devices[i];
    prometheus::Labels l = dcgm_labels(d, mig_parent(r.devices, d), info.hostname, driver, info.hostname_label);
    add_pod_labels(d, r.devices, pods, &l);
    labels.push_back(with_hpc_jobs(std::move(l), i, hpc_jobs));
  }
  for (const DcgmMetric& m : dcgm_metrics()) {
    MetricFamily f = dcgm_family(m, r.devices, labels);
    if (select_dcgm(m, info, &f)) out->push_back(std::move(f));
  }
}

// Why gpuenv cannot serve line `c`; "" when it can.
std::string unservable_reason(const DcgmCounter& c, const std::vector<DcgmCounter>& all) {
  for (const DcgmCounter& first : all) {
    if (&first == &c) break;
    if (first.field == c.field) return "listed again (line " + std::to_string(first.line) + " counts)";
  }
  if (c.type == "label")
    return c.field == "DCGM_FI_DRIVER_VERSION" ? "" : "a label field: gpuenv adds DCGM_FI_DRIVER_VERSION only";
  if (c.type != "gauge" && c.type != "counter") return "type " + c.type + ": gpuenv serves gauges and counters";
  for (const DcgmMetric& m : dcgm_metrics())
    if (c.field == m.name) return "";
  return "not a field gpuenv serves (docs/metrics.md, \"dcgm-exporter's names\", lists them)";
}

}  // namespace

std::vector<std::string> dcgm_unservable(const std::vector<DcgmCounter>& counters) {
  std::vector<std::string> out;
  for (const DcgmCounter& c : counters)
    if (std::string why = unservable_reason(c, counters); !why.empty())
      out.push_back(c.field + " (line " + std::to_string(c.line) + "): " + why);
  return out;
}

prometheus::Labels dcgm_labels(const DeviceReading& d, const DeviceReading* parent, const std::string& hostname,
                               const std::optional<std::string>& driver_version, const std::string& hostname_label) {
  const DeviceReading& gpu = parent ? *parent : d;
  prometheus::Labels l{{"gpu", std::to_string(d.gpu)}};
  if (gpu.uuid) l.emplace_back("UUID", *gpu.uuid);
  if (gpu.pci_bus_id) l.emplace_back("pci_bus_id", *gpu.pci_bus_id);
  if (gpu.minor_number) l.emplace_back("device", "nvidia" + std::to_string(*gpu.minor_number));
  if (gpu.name) l.emplace_back("modelName", *gpu.name);
  if (d.mig && d.mig_profile) l.emplace_back("GPU_I_PROFILE", *d.mig_profile);
  if (d.mig && d.gpu_instance_id) l.emplace_back("GPU_I_ID", std::to_string(*d.gpu_instance_id));
  if (!hostname.empty()) l.emplace_back(hostname_label, hostname);
  if (driver_version) l.emplace_back("DCGM_FI_DRIVER_VERSION", *driver_version);
  return l;
}

prometheus::Labels device_labels(const DeviceReading& d) {
  prometheus::Labels l{{"gpu", std::to_string(d.gpu)}};
  if (d.mig) l.emplace_back("mig", std::to_string(*d.mig));
  if (d.uuid) l.emplace_back("uuid", *d.uuid);
  if (d.name) l.emplace_back("name", *d.name);
  if (d.pci_bus_id) l.emplace_back("pci_bus_id", *d.pci_bus_id);
  return l;
}

std::vector<MetricFamily> gpu_metric_families(const Readings& r, const ExporterInfo& info, double now,
                                        const PodDevices& pods, const HpcJobs& hpc_jobs) {
  std::vector<MetricFamily> out;
  if (info.gpuenv_names) gpuenv_families(r, pods, &out);
  if (info.dcgm_names) dcgm_families(r, info, pods, hpc_jobs, &out);
  out.push_back(plan_family(info));
  out.push_back({"gpuenv_build_info", Type::kGauge, "The gpuenv serving these metrics (1)",
                 {{{{"version", info.version}}, 1}}});
  out.push_back({"gpuenv_exporter_scrape_age_seconds", Type::kGauge,
                 "Age of the NVML sample this scrape returns", {{{}, now - r.sampled_at}}});
  out.push_back({"gpuenv_exporter_nvml_errors_total", Type::kCounter,
                 "NVML calls that failed since the exporter started",
                 {{{}, static_cast<double>(r.nvml_errors_total)}}});
  return out;
}

std::string render_gpu_metrics(const Readings& r, const ExporterInfo& info, double now,
                               const PodDevices& pods, const HpcJobs& hpc_jobs) {
  return prometheus::render(gpu_metric_families(r, info, now, pods, hpc_jobs));
}

}  // namespace gpuenv

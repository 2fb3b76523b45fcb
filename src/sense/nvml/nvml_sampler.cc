#include "sense/nvml/nvml_sampler.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <string_view>

#include "sense/nvml/nvml_call.h"
#include "sense/nvml/nvml_reading.h"

namespace gpuenv {
namespace {

/// Calls about one device; counts the failures into the memory.
struct DeviceCall {
  DeviceCall(const Nvml& nvml, std::string subject) : call(nvml, std::move(subject), &problems, &gpu) {}
  std::vector<Problem> problems;
  Gpu gpu;  // gets the Problem of a fatal failure (lost, needs a reset)
  NvmlCaller call;
  std::uint64_t failures() const { return problems.size() + (gpu.problem ? 1 : 0); }
};

std::optional<std::uint64_t> field_u64(const nvml::FieldValue& v) {
  if (v.nvml_return != nvml::kSuccess) return std::nullopt;
  switch (v.value_type) {
    case nvml::kValueTypeUnsignedInt: return v.value.ui;
    case nvml::kValueTypeUnsignedLong: return v.value.ul;
    case nvml::kValueTypeUnsignedLongLong: return v.value.ull;
    default: return std::nullopt;
  }
}

/// The round's field values in one call: the HBM temperature and, on a GPU
/// with NVLink (read_links first), the data sent and received over all links.
void read_fields(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r) {
  nvml::FieldValue v[3] = {};
  v[0].field_id = nvml::kFieldMemoryTemp;
  v[1].field_id = nvml::kFieldNvlinkDataTx, v[1].scope_id = nvml::kScopeAllLinks;
  v[2].field_id = nvml::kFieldNvlinkDataRx, v[2].scope_id = nvml::kScopeAllLinks;
  int n = r->nvlink_links_up ? 3 : 1;
  if (!call(f.field_values, d, n, v)) return;
  if (std::optional<std::uint64_t> c = field_u64(v[0]); c && *c <= INT_MAX) r->memory_temperature_c = static_cast<int>(*c);
  std::optional<std::uint64_t> tx = field_u64(v[1]), rx = field_u64(v[2]);
  constexpr std::uint64_t kKiB = 1024, kMaxKiB = UINT64_MAX / kKiB;
  if (n == 3 && tx && rx && *tx <= kMaxKiB && *rx <= kMaxKiB)
    r->nvlink_tx_bytes = *tx * kKiB, r->nvlink_rx_bytes = *rx * kKiB;
}

// One active link's error counters; nullopt when it answered none.
std::optional<NvlinkErrors> link_errors(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, unsigned link) {
  static constexpr std::pair<int, std::optional<std::uint64_t> NvlinkErrors::*> kCounters[] = {
      {nvml::kNvlinkErrorDlCrcFlit, &NvlinkErrors::crc_flit}, {nvml::kNvlinkErrorDlCrcData, &NvlinkErrors::crc_data},
      {nvml::kNvlinkErrorDlReplay, &NvlinkErrors::replay},    {nvml::kNvlinkErrorDlRecovery, &NvlinkErrors::recovery}};
  NvlinkErrors e{link, {}, {}, {}, {}};
  bool any = false;
  for (const auto& [counter, field] : kCounters) {
    unsigned long long n = 0;
    if (call(f.nvlink_error_counter, d, link, counter, &n)) e.*field = n, any = true;
  }
  if (!any) return std::nullopt;
  return e;
}

void read_links(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r) {
  r->pcie_link_generation = get_int(call, f.pcie_gen_current, d);
  r->pcie_link_width = get_int(call, f.pcie_width_current, d);
  if (std::optional<std::uint32_t> n = get_uint(call, f.pcie_replay, d)) r->pcie_replay_errors = *n;
  std::optional<std::vector<unsigned>> links = active_nvlink_list(call, f, d);
  if (!links) return;
  r->nvlink_links_up = static_cast<int>(links->size());
  for (unsigned link : *links)
    if (std::optional<NvlinkErrors> e = link_errors(call, f, d, link)) r->nvlink_errors.push_back(*e);
}

// The video engines' use (whole GPUs), as dcgm-exporter's ENC_UTIL and DEC_UTIL.
void read_codecs(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r) {
  unsigned percent = 0, period_us = 0;
  if (call(f.encoder_utilization, d, &percent, &period_us) && percent <= 100) r->encoder_utilization_ratio = percent / 100.0;
  if (call(f.decoder_utilization, d, &percent, &period_us) && percent <= 100) r->decoder_utilization_ratio = percent / 100.0;
}

// PCIe traffic where GPM cannot say (before Hopper): nvmlDeviceGetPcieThroughput,
// NVML's KiB/s over its last 20 ms, as bytes a second.
void read_pcie_throughput(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, DeviceReading* r) {
  unsigned kib = 0;
  if (call(f.pcie_throughput, d, nvml::kPcieUtilTxBytes, &kib)) r->pcie_tx_bytes_per_second = kib * 1024.0;
  if (call(f.pcie_throughput, d, nvml::kPcieUtilRxBytes, &kib)) r->pcie_rx_bytes_per_second = kib * 1024.0;
}

// ---- The processes on each device: NVML's lists, and each one's SM use.

constexpr unsigned kMostListed = 1024;  // a longer list is not read (the call counts as failed)
constexpr unsigned kListSlack = 8;      // room for processes that start between the calls

// Reads an NVML list the size-probe way: asked with no room first, then with
// room for the count it gave and some slack, twice at most (it may grow in
// between). fetch(&n, buffer) makes one call; returns the last call's code.
template <typename T, typename Fetch>
nvml::Return fetch_list(std::vector<T>* out, Fetch fetch) {
  unsigned n = 0;
  nvml::Return rc = fetch(&n, nullptr);
  for (int tries = 0; rc == nvml::kErrorInsufficientSize && n <= kMostListed && tries < 2; ++tries) {
    out->resize(std::min(n + kListSlack, kMostListed));
    n = static_cast<unsigned>(out->size());
    rc = fetch(&n, out->data());
  }
  out->resize(rc == nvml::kSuccess ? std::min<std::size_t>(n, out->size()) : 0);
  return rc;
}

// Puts a return code already had through the caller as if it had made the
// call `fn`: "absent" quietly, a failure counted, a lost GPU stops it.
bool settle(NvmlCaller& call, const char* fn, nvml::Return rc) {
  using Echo = nvml::Return (*)(nvml::Return);
  Fn<Echo> echo{[](nvml::Return r) { return r; }, fn};
  return call(echo, rc);
}

// One of NVML's running-process lists of d; nullopt when it cannot be read.
std::optional<std::vector<nvml::ProcessInfo>> running(NvmlCaller& call,
                                                      const Fn<nvml::DeviceGetComputeRunningProcessesFn>& fn,
                                                      nvml::Device d) {
  std::vector<nvml::ProcessInfo> infos;
  nvml::Return rc = nvml::kErrorFunctionNotFound;
  if (fn.call != nullptr && !call.stopped()) {
    trace::Scope t(fn.name);
    rc = fetch_list(&infos, [&](unsigned* n, nvml::ProcessInfo* p) { return fn.call(d, n, p); });
  }
  if (!settle(call, fn.name, rc)) return std::nullopt;
  return infos;
}

// Adds a listed process once per PID: listed again, it keeps the larger memory.
void add_process(const nvml::ProcessInfo& p, std::vector<GpuProcess>* out) {
  std::optional<std::uint64_t> bytes;
  if (p.used_gpu_memory != nvml::kValueNotAvailable) bytes = p.used_gpu_memory;
  auto same = std::find_if(out->begin(), out->end(), [&](const GpuProcess& q) { return q.pid == p.pid; });
  if (same == out->end())
    out->push_back(GpuProcess{p.pid, bytes, std::nullopt});
  else if (bytes && (!same->used_memory_bytes || *bytes > *same->used_memory_bytes))
    same->used_memory_bytes = bytes;
}

// The processes on d: the compute list, then the graphics list's others
// (when it answers); nullopt when the compute list cannot be read.
std::optional<std::vector<GpuProcess>> read_processes(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d) {
  std::optional<std::vector<nvml::ProcessInfo>> compute = running(call, f.processes, d);
  if (!compute) return std::nullopt;
  std::vector<GpuProcess> out;
  for (const nvml::ProcessInfo& p : *compute) add_process(p, &out);
  if (std::optional<std::vector<nvml::ProcessInfo>> graphics = running(call, f.graphics_processes, d))
    for (const nvml::ProcessInfo& p : *graphics) add_process(p, &out);
  return out;
}

// The per-process utilisation samples of d newer than `seen` (CPU µs);
// none when NVML has none (NOT_FOUND) or cannot say.
std::vector<nvml::ProcessUtilizationSample> process_samples(NvmlCaller& call, const NvmlFunctions& f,
                                                            nvml::Device d, std::uint64_t seen) {
  const Fn<nvml::DeviceGetProcessUtilizationFn>& fn = f.process_utilization;
  std::vector<nvml::ProcessUtilizationSample> samples;
  nvml::Return rc = nvml::kErrorFunctionNotFound;
  if (fn.call != nullptr && !call.stopped()) {
    trace::Scope t(fn.name);
    rc = fetch_list(&samples, [&](unsigned* n, nvml::ProcessUtilizationSample* s) { return fn.call(d, s, n, seen); });
  }
  settle(call, fn.name, rc);
  return samples;
}

// Each PID's newest sample.
std::map<std::uint32_t, nvml::ProcessUtilizationSample> newest_by_pid(
    const std::vector<nvml::ProcessUtilizationSample>& samples) {
  std::map<std::uint32_t, nvml::ProcessUtilizationSample> newest;
  for (const nvml::ProcessUtilizationSample& s : samples) {
    auto [at, added] = newest.try_emplace(s.pid, s);
    if (!added && s.time_stamp >= at->second.time_stamp) at->second = s;
  }
  return newest;
}

// Gives each process the SM use of its newest sample; returns the newest
// sample's time, or `seen` when there is none.
std::uint64_t set_sm_ratios(const std::vector<nvml::ProcessUtilizationSample>& samples, std::uint64_t seen,
                            std::vector<GpuProcess>* processes) {
  std::map<std::uint32_t, nvml::ProcessUtilizationSample> newest = newest_by_pid(samples);
  for (GpuProcess& p : *processes)
    if (auto s = newest.find(p.pid); s != newest.end() && s->second.sm_util <= 100)
      p.sm_ratio = s->second.sm_util / 100.0;
  for (const nvml::ProcessUtilizationSample& s : samples) seen = std::max<std::uint64_t>(seen, s.time_stamp);
  return seen;
}

// A whole GPU's processes, each with its SM use since the round before
// (the GPU's memory keeps the newest sample's time for the next round).
void read_gpu_processes(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, SamplerMemory::Identity* known,
                        DeviceReading* r) {
  r->processes = read_processes(call, f, d);
  if (!r->processes || r->processes->empty()) return;
  std::vector<nvml::ProcessUtilizationSample> samples = process_samples(call, f, d, known->process_samples_seen);
  known->process_samples_seen = set_sm_ratios(samples, known->process_samples_seen, &*r->processes);
}

// A lost device keeps its labels and says so; what it answered before it
// was lost is dropped with the rest of its values.
DeviceReading lost(const DeviceReading& r) {
  DeviceReading out;
  out.gpu = r.gpu;
  out.mig = r.mig;
  out.uuid = r.uuid;
  out.name = r.name;
  out.pci_bus_id = r.pci_bus_id;
  out.minor_number = r.minor_number;
  out.gpu_instance_id = r.gpu_instance_id;
  out.mig_profile = r.mig_profile;
  return out;
}

// "NVIDIA A100-SXM4-80GB MIG 2g.20gb" -> "2g.20gb", as dcgm-exporter's GPU_I_PROFILE.
std::optional<std::string> mig_profile(const std::optional<std::string>& name) {
  constexpr std::string_view kMig = " MIG ";
  std::size_t at = name ? name->rfind(kMig) : std::string::npos;
  if (at == std::string::npos) return std::nullopt;
  return name->substr(at + kMig.size());
}

void remember(std::optional<std::string>* known, NvmlCaller& call, const Fn<nvml::DeviceGetStringFn>& fn,
              nvml::Device d) {
  if (!*known) *known = get_string(call, fn, d);
}

DeviceReading read_mig(const Nvml& nvml, nvml::Device parent, const DeviceReading& gpu, unsigned slot,
                       std::uint64_t* errors, bool* present) {
  DeviceCall c(nvml, "GPU " + std::to_string(gpu.gpu) + " MIG " + std::to_string(slot));
  DeviceReading r;
  r.gpu = gpu.gpu;
  r.mig = static_cast<int>(slot);
  r.pci_bus_id = gpu.pci_bus_id;
  r.minor_number = gpu.minor_number;
  nvml::Device d = nullptr;
  *present = c.call(nvml.fn.mig_handle, parent, slot, &d);
  if (*present) {
    r.uuid = get_string(c.call, nvml.fn.uuid, d);
    r.name = get_string(c.call, nvml.fn.name, d);
    r.mig_profile = mig_profile(r.name);
    r.gpu_instance_id = get_int(c.call, nvml.fn.gpu_instance_id, d);
    read_usage(c.call, nvml.fn, d, &r);
    r.processes = read_processes(c.call, nvml.fn, d);
    r.up = !c.call.stopped();
  }
  *errors += c.failures();
  return r.up ? r : lost(r);
}

// The MIG devices of a GPU in MIG mode; a slot NVML has no device in
// (NOT_FOUND) is skipped.
void read_migs(const Nvml& nvml, nvml::Device d, const DeviceReading& gpu, NvmlCaller& call,
               std::uint64_t* errors, std::vector<DeviceReading>* out) {
  unsigned current = 0, pending = 0, slots = 0;
  if (!call(nvml.fn.mig_mode, d, &current, &pending) || current != nvml::kDeviceMigEnable) return;
  if (!call(nvml.fn.max_mig_devices, d, &slots)) return;
  for (unsigned slot = 0; slot < slots; ++slot) {
    bool present = false;
    DeviceReading r = read_mig(nvml, d, gpu, slot, errors, &present);
    if (present) out->push_back(std::move(r));
  }
}

// Registers the GPU for Xid events once (the set is made on first use).
// A GPU or driver without them keeps xid_watched false: no Xid series.
void watch_xid(const Nvml& nvml, nvml::Device d, SamplerMemory::Identity* known, SamplerMemory* memory) {
  const NvmlFunctions& f = nvml.fn;
  if (known->xid_tried || !f.event_set_create.call || !f.register_events.call || !f.event_set_wait.call) return;
  known->xid_tried = true;
  if (!memory->xid_set && f.event_set_create.call(&memory->xid_set) != nvml::kSuccess) {
    memory->xid_set = nullptr;
    return;
  }
  known->handle = d;
  known->xid_watched =
      f.register_events.call(d, nvml::kEventTypeXidCriticalError, memory->xid_set) == nvml::kSuccess;
}

// Takes the Xid events that arrived since the last round, without waiting
// (timeout 0), and puts each GPU's last one and count on its reading.
void drain_xid(const Nvml& nvml, SamplerMemory* memory, std::vector<DeviceReading>* devices) {
  constexpr int kMostPerRound = 256;  // a storm of events cannot hold the round up
  nvml::EventData e{};
  for (int i = 0; memory->xid_set && i < kMostPerRound &&
                  nvml.fn.event_set_wait.call(memory->xid_set, &e, 0) == nvml::kSuccess;
       ++i) {
    if (!(e.event_type & nvml::kEventTypeXidCriticalError)) continue;
    for (SamplerMemory::Identity& g : memory->gpus)
      if (g.xid_watched && g.handle == e.device) g.xid_last = e.event_data, ++g.xid_events;
  }
  for (DeviceReading& r : *devices) {
    const SamplerMemory::Identity& g = memory->gpus[static_cast<std::size_t>(r.gpu)];
    if (r.mig || !r.up || !g.xid_watched) continue;
    r.xid_last = g.xid_last;
    r.xid_events = g.xid_events;
  }
}

void read_driver(const Nvml& nvml, SamplerMemory* memory) {
  char buf[nvml::kDriverVersionBufferSize] = {};
  if (!memory->driver_version && nvml.fn.driver_version.call &&
      nvml.fn.driver_version.call(buf, sizeof buf) == nvml::kSuccess)
    memory->driver_version = c_string(buf);
}

void read_gpu(const Nvml& nvml, unsigned index, SamplerMemory::Identity* known, SamplerMemory* memory,
              std::vector<DeviceReading>* out) {
  DeviceCall c(nvml, "GPU " + std::to_string(index));
  const NvmlFunctions& f = nvml.fn;
  DeviceReading r;
  r.gpu = static_cast<int>(index);
  nvml::Device d = nullptr;
  std::vector<DeviceReading> migs;
  if (c.call(f.handle, index, &d)) {
    remember(&known->name, c.call, f.name, d);
    remember(&known->uuid, c.call, f.uuid, d);
    if (!known->pci_bus_id) known->pci_bus_id = pci_bus_id(c.call, f, d);
    if (!known->minor_number) known->minor_number = get_int(c.call, f.minor_number, d);
    watch_xid(nvml, d, known, memory);
    r.uuid = known->uuid, r.name = known->name, r.pci_bus_id = known->pci_bus_id;
    r.minor_number = known->minor_number;
    read_live_state(c.call, f, d, &r);
    read_links(c.call, f, d, &r);
    read_fields(c.call, f, d, &r);
    read_codecs(c.call, f, d, &r);
    read_gpu_processes(c.call, f, d, known, &r);
    read_migs(nvml, d, r, c.call, &memory->nvml_errors_total, &migs);
    r.up = !c.call.stopped();
  }
  r.uuid = known->uuid, r.name = known->name, r.pci_bus_id = known->pci_bus_id;
  r.minor_number = known->minor_number;
  memory->nvml_errors_total += c.failures();
  out->push_back(r.up ? r : lost(r));
  if (r.up) out->insert(out->end(), migs.begin(), migs.end());
}

// ---- NVML GPM: each device's figures between the last round and this one.

void set_gpm(const GpmRatios& g, DeviceReading* r) {
  r->gpm_gr_engine_active = g.gr_engine_active, r->gpm_sm_active = g.sm_active;
  r->gpm_sm_occupancy = g.sm_occupancy, r->gpm_tensor_active = g.tensor_active;
  r->gpm_fp32_active = g.fp32_active, r->gpm_fp16_active = g.fp16_active, r->gpm_dram_active = g.dram_active;
  // Only what the source gave: DCGM's fields here have no PCIe rate, and
  // must not hide nvmlDeviceGetPcieThroughput's.
  if (r->mig) return;
  if (g.pcie_tx_bytes_per_second) r->pcie_tx_bytes_per_second = g.pcie_tx_bytes_per_second;
  if (g.pcie_rx_bytes_per_second) r->pcie_rx_bytes_per_second = g.pcie_rx_bytes_per_second;
}

// The handle GPM samples through (a MIG instance's parent GPU) and, for a
// MIG device, its GPU instance id; false when NVML cannot say.
bool gpm_target(const Nvml& nvml, NvmlCaller& call, const DeviceReading& r, nvml::Device* gpu,
                std::optional<unsigned>* instance) {
  if (!call(nvml.fn.handle, static_cast<unsigned>(r.gpu), gpu)) return false;
  if (!r.mig) return true;
  nvml::Device mig = nullptr;
  if (!call(nvml.fn.mig_handle, *gpu, static_cast<unsigned>(*r.mig), &mig)) return false;
  *instance = get_uint(call, nvml.fn.gpu_instance_id, mig);
  return instance->has_value();
}

void read_gpm(const Nvml& nvml, SamplerMemory* memory, DeviceReading* r) {
  std::pair<int, int> key{r->gpu, r->mig.value_or(-1)};
  auto known = memory->gpm.find(key);
  if (!r->up) {
    if (known != memory->gpm.end()) memory->gpm.erase(known);  // a reset GPU starts afresh
    return;
  }
  bool gpm_off = known != memory->gpm.end() && !known->second.supported();  // asked once
  if (gpm_off && r->mig) return;
  DeviceCall c(nvml, "GPU " + std::to_string(r->gpu) + (r->mig ? " MIG " + std::to_string(*r->mig) : ""));
  nvml::Device gpu = nullptr;
  std::optional<unsigned> instance;
  if (gpm_target(nvml, c.call, *r, &gpu, &instance)) {
    if (!gpm_off && (known == memory->gpm.end() || known->second.gpu_instance() != instance))
      known = memory->gpm.insert_or_assign(key, GpmDevice(nvml, gpu, instance)).first;
    if (std::optional<GpmRatios> g = gpm_off ? std::nullopt : known->second.next(c.call)) set_gpm(*g, r);
    if (!r->mig && !known->second.supported()) read_pcie_throughput(c.call, nvml.fn, gpu, r);
  }
  memory->nvml_errors_total += c.failures();
}

void read_gpm_all(const Nvml& nvml, SamplerMemory* memory, std::vector<DeviceReading>* devices) {
  for (DeviceReading& r : *devices) {
    read_gpm(nvml, memory, &r);
    auto known = memory->gpm.find({r.gpu, -1});
    r.gpm_unsupported = !r.mig && r.up && known != memory->gpm.end() && !known->second.supported();
  }
}

// ---- DCGM: the profiling fields of the whole GPUs GPM cannot sample.

// Starts DCGM once, for the GPUs of the first round that lack GPM.
void start_dcgm(SamplerMemory* memory, const std::vector<std::string>& uuids) {
  memory->dcgm_tried = true;
  auto dcgm = std::make_unique<DcgmProfiler>();
  std::string err;
  if (!dcgm_library_loads(memory->dcgm_library, &err)) return;  // not installed: no problem, no source
  if (dcgm->start(memory->dcgm_library, uuids, memory->dcgm_interval, &err))
    memory->dcgm = std::move(dcgm);
  else
    memory->dcgm_problem = err;
}

void read_dcgm(SamplerMemory* memory, Readings* r) {
  std::vector<std::string> uuids;
  for (const DeviceReading& d : r->devices)
    if (d.gpm_unsupported && d.uuid) uuids.push_back(*d.uuid);
  if (uuids.empty() || memory->dcgm_library.empty()) return;
  if (!memory->dcgm_tried) start_dcgm(memory, uuids);
  r->dcgm_problem = memory->dcgm_problem;
  std::map<std::string, GpmRatios> latest;
  std::string err;
  if (!memory->dcgm) return;
  if (!memory->dcgm->latest(&latest, &err)) {  // this round's figures stay unknown
    r->dcgm_problem = err;
    return;
  }
  r->dcgm_serving = true;
  for (DeviceReading& d : r->devices)
    if (auto g = d.gpm_unsupported && d.uuid ? latest.find(*d.uuid) : latest.end(); g != latest.end())
      set_gpm(g->second, &d);
}

// ---- NVLink traffic: each GPU's bytes a second since the last round.

void rate_nvlink(SamplerMemory* memory, double now, std::vector<DeviceReading>* devices) {
  for (DeviceReading& r : *devices) {
    if (r.mig || r.gpu < 0 || static_cast<std::size_t>(r.gpu) >= memory->gpus.size()) continue;
    SamplerMemory::Identity& known = memory->gpus[r.gpu];
    std::optional<std::uint64_t> total;
    if (r.nvlink_tx_bytes && r.nvlink_rx_bytes && *r.nvlink_tx_bytes <= UINT64_MAX - *r.nvlink_rx_bytes)
      total = *r.nvlink_tx_bytes + *r.nvlink_rx_bytes;
    // A counter that went back (the driver reloaded) starts over: no rate this round.
    if (total && known.nvlink_bytes && *total >= *known.nvlink_bytes && now > known.nvlink_at)
      r.nvlink_bytes_per_second = static_cast<double>(*total - *known.nvlink_bytes) / (now - known.nvlink_at);
    known.nvlink_bytes = total, known.nvlink_at = now;
  }
}

}  // namespace

void release_nvml_events(const Nvml& nvml, SamplerMemory* memory) {
  if (memory->xid_set && nvml.fn.event_set_free.call) nvml.fn.event_set_free.call(memory->xid_set);
  memory->xid_set = nullptr;
  for (SamplerMemory::Identity& g : memory->gpus) g.xid_tried = g.xid_watched = false;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Readings sample_nvml(const Nvml& nvml, SamplerMemory* memory, double now) {
  Readings r;
  unsigned count = 0;
  if (nvml.fn.count.call(&count) != nvml::kSuccess) {
    ++memory->nvml_errors_total;  // every GPU known before is lost to us
    count = 0;
    for (std::size_t i = 0; i < memory->gpus.size(); ++i) {
      DeviceReading g;
      g.gpu = static_cast<int>(i);
      g.uuid = memory->gpus[i].uuid, g.name = memory->gpus[i].name, g.pci_bus_id = memory->gpus[i].pci_bus_id;
      r.devices.push_back(g);
    }
  }
  if (memory->gpus.size() < count) memory->gpus.resize(count);
  for (unsigned i = 0; i < count; ++i) read_gpu(nvml, i, &memory->gpus[i], memory, &r.devices);
  drain_xid(nvml, memory, &r.devices);
  read_driver(nvml, memory);
  r.driver_version = memory->driver_version;
  read_gpm_all(nvml, memory, &r.devices);
  read_dcgm(memory, &r);
  rate_nvlink(memory, now, &r.devices);
  r.nvml_errors_total = memory->nvml_errors_total;
  r.sampled_at = now;
  return r;
}

NvmlSampler::~NvmlSampler() { stop(); }

bool NvmlSampler::start(const std::string& library, std::chrono::milliseconds interval, Problem* err,
                        const std::string& dcgm_library) {
  if (!session_.open(library, err)) return false;
  memory_.dcgm_library = dcgm_library;
  memory_.dcgm_interval = interval;
  latest_ = std::make_shared<const Readings>(sample_nvml(session_.nvml(), &memory_, steady_seconds()));
  thread_.start(interval, [this] { round(); });
  return true;
}

std::shared_ptr<const Readings> NvmlSampler::latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return latest_;
}

void NvmlSampler::round() {
  // Outside the lock: a scrape meanwhile gets the previous round.
  auto next = std::make_shared<const Readings>(sample_nvml(session_.nvml(), &memory_, steady_seconds()));
  std::lock_guard<std::mutex> lock(mutex_);
  latest_ = std::move(next);
}

void NvmlSampler::stop() {
  thread_.stop();
  memory_.gpm.clear();  // frees NVML's GPM samples while NVML is still up
  memory_.dcgm.reset();  // stops DCGM's host engine
  if (session_.is_open()) release_nvml_events(session_.nvml(), &memory_);
  session_.close();
}

}  // namespace gpuenv

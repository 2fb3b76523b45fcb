#include "sense/nvml/nvml_device.h"

#include <array>
#include <climits>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <utility>

#include "sys/fs.h"
#include "sys/text.h"
#include "sense/host/host_parse.h"
#include "sense/nvml/nvml_call.h"
#include "sense/nvml/nvml_errors.h"
#include "sense/nvml/nvml_reading.h"
#include "sense/parallel.h"
#include "sense/trace.h"

namespace gpuenv {
namespace {

constexpr unsigned kCpuSetWords = 64;  // room for 4096 CPUs
constexpr unsigned kBitsPerWord = sizeof(unsigned long) * CHAR_BIT;

std::string gpu_subject(unsigned index) { return "GPU " + std::to_string(index); }

std::optional<ComputeCapability> compute_capability(NvmlCaller& call, const NvmlFunctions& f,
                                                    nvml::Device d) {
  int major = 0, minor = 0;
  if (!call(f.compute_capability, d, &major, &minor)) return std::nullopt;
  return ComputeCapability{major, minor};
}

void query_identity(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, Gpu* g) {
  g->name = get_string(call, f.name, d);
  g->uuid = get_string(call, f.uuid, d);
  g->pci_bus_id = pci_bus_id(call, f, d);
  g->compute_capability = compute_capability(call, f, d);
  if (std::optional<MemoryInfo> mem = memory_info(call, f, d)) {
    g->memory_total_bytes = mem->total;
    g->memory_free_bytes = mem->free;
  }
}

std::optional<MigAttributes> mig_attributes(NvmlCaller& call, const NvmlFunctions& f, nvml::Device mig) {
  nvml::DeviceAttributes a{};
  if (!call(f.attributes, mig, &a)) return std::nullopt;
  auto count = [](unsigned int n) { return static_cast<int>(std::min(n, 0x7fffffffu)); };
  return MigAttributes{count(a.multiprocessor_count),     count(a.shared_copy_engine_count),
                       count(a.shared_decoder_count),     count(a.shared_encoder_count),
                       count(a.shared_jpeg_count),        count(a.shared_ofa_count),
                       count(a.gpu_instance_slice_count), count(a.compute_instance_slice_count),
                       a.memory_size_mb};
}

MigDevice query_mig_device(NvmlCaller& call, const NvmlFunctions& f, nvml::Device mig,
                           unsigned slot) {
  MigDevice m;
  m.index = static_cast<int>(slot);
  m.uuid = get_string(call, f.uuid, mig).value_or("");
  m.name = get_string(call, f.name, mig);
  if (std::optional<MemoryInfo> mem = memory_info(call, f, mig)) m.memory_total_bytes = mem->total;
  m.gpu_instance_id = get_int(call, f.gpu_instance_id, mig);
  m.compute_instance_id = get_int(call, f.compute_instance_id, mig);
  m.attributes = mig_attributes(call, f, mig);
  return m;
}

void query_mig(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, Gpu* g) {
  MigSlots migs = mig_slots(call, f, d);
  g->mig_enabled = migs.enabled;
  for (const MigSlots::Slot& m : migs.devices) g->mig_devices.push_back(query_mig_device(call, f, m.handle, m.slot));
}

void query_modes(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, Gpu* g) {
  int state = 0, mode = 0;
  if (call(f.persistence_mode, d, &state)) g->persistence_mode = state == nvml::kFeatureEnabled;
  if (call(f.compute_mode, d, &mode)) g->compute_mode = compute_mode_name(mode);
}

void query_pcie(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, PcieLink* link) {
  link->gen_current = get_int(call, f.pcie_gen_current, d);
  link->gen_max = get_int(call, f.pcie_gen_max, d);
  link->width_current = get_int(call, f.pcie_width_current, d);
  link->width_max = get_int(call, f.pcie_width_max, d);
}

std::optional<std::uint32_t> max_clock(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d,
                                       int type) {
  unsigned mhz = 0;
  if (!call(f.max_clock, d, type, &mhz)) return std::nullopt;
  return mhz;
}

void query_limits(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, Gpu* g) {
  g->power_limit_mw = get_uint(call, f.power_limit, d);
}

void query_clocks(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, Gpu* g) {
  g->max_sm_clock_mhz = max_clock(call, f, d, nvml::kClockSm);
  g->max_memory_clock_mhz = max_clock(call, f, d, nvml::kClockMem);
}

std::optional<std::vector<int>> cpu_affinity(NvmlCaller& call, const NvmlFunctions& f,
                                             nvml::Device d) {
  std::array<unsigned long, kCpuSetWords> set{};
  if (!call(f.cpu_affinity, d, kCpuSetWords, set.data())) return std::nullopt;
  std::vector<int> cpus;
  for (unsigned cpu = 0; cpu < kCpuSetWords * kBitsPerWord; ++cpu)
    if (set[cpu / kBitsPerWord] >> (cpu % kBitsPerWord) & 1ul)
      cpus.push_back(static_cast<int>(cpu));
  if (cpus.empty()) return std::nullopt;
  return cpus;
}

// The GPU's PCI device in sysfs, /sys/bus/pci/devices/0000:18:00.0 (not
// under the root); nullopt when NVML gave no bus id sysfs could name.
std::optional<std::string> pci_device_dir(const std::optional<std::string>& bus_id) {
  std::optional<std::string> address = bus_id ? sysfs_pci_address(*bus_id) : std::nullopt;
  if (!address) return std::nullopt;
  return "/sys/bus/pci/devices/" + *address;
}

// A file of the GPU's PCI device, e.g. its local_cpulist; nullopt when the
// address is unknown or the file unreadable.
std::optional<std::string> read_pci_file(const NvmlQuery& q, const std::optional<std::string>& bus_id,
                                         const char* file) {
  std::optional<std::string> dir = pci_device_dir(bus_id);
  std::string text, err;
  if (!dir || !fs::read_file(fs::under(q.root, *dir + "/" + file), &text, &err))
    return std::nullopt;
  return text;
}

// local_cpulist: the CPUs of the GPU's NUMA node (what NVML's CPU affinity
// reports, and slow for NVML to say: docs/performance.md). False: ask NVML.
bool sysfs_cpu_affinity(const NvmlQuery& q, const Gpu& g, std::optional<std::vector<int>>* cpus) {
  std::optional<std::string> text = read_pci_file(q, g.pci_bus_id, "local_cpulist");
  std::vector<int> list;
  std::string err;
  if (!text || !parse_cpu_list(*text, &list, &err) || list.empty()) return false;
  *cpus = std::move(list);
  return true;
}

// numa_node: -1 is "none" (a one-node machine), an answer in itself.
bool sysfs_numa_node(const NvmlQuery& q, const Gpu& g, std::optional<int>* node) {
  std::optional<std::string> text = read_pci_file(q, g.pci_bus_id, "numa_node");
  std::string err;
  return text && parse_numa_node(*text, node, &err);
}

// class: "0x030200" (a 3D controller) or "0x030000" (VGA); nullopt when
// unreadable or not of that form.
std::optional<std::string> sysfs_pci_class(const NvmlQuery& q, const Gpu& g) {
  std::optional<std::string> text = read_pci_file(q, g.pci_bus_id, "class");
  if (!text) return std::nullopt;
  std::string c = ascii_lower(std::string(trim(*text)));
  bool hex = c.size() == 8 && c.rfind("0x", 0) == 0 && c.find_first_not_of("0123456789abcdef", 2) == std::string::npos;
  return hex ? std::optional<std::string>(c) : std::nullopt;
}

void query_locality(NvmlCaller& call, const NvmlFunctions& f, const NvmlQuery& q, nvml::Device d,
                    Gpu* g) {
  bool cpus_known, node_known;
  {
    trace::Scope t("sysfs PCI device locality");
    cpus_known = sysfs_cpu_affinity(q, *g, &g->cpu_affinity);
    node_known = sysfs_numa_node(q, *g, &g->numa_node);
    g->pci_class = sysfs_pci_class(q, *g);
  }
  if (!cpus_known) g->cpu_affinity = cpu_affinity(call, f, d);
  if (!node_known) g->numa_node = get_int(call, f.numa_node, d);
}

// --- health (doctor) ----------------------------------------------------

// ECC off: the counts mean nothing, whatever NVML answers for them.
void query_ecc_mode(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, Gpu* g) {
  int current = 0, pending = 0;
  if (call(f.ecc_mode, d, &current, &pending)) g->ecc_enabled = current == nvml::kFeatureEnabled;
}

void query_retired_pages(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, Gpu* g) {
  int retired = 0;
  if (call(f.retired_pages_pending, d, &retired))
    g->retired_pages_pending = retired == nvml::kFeatureEnabled;
}

// The registration's status means something only once it completed.
void query_fabric(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, Gpu* g) {
  nvml::GpuFabricInfo info{};
  if (!call(f.fabric_info, d, &info)) return;
  g->fabric_state = fabric_state_name(info.state);
  if (info.state == nvml::kFabricStateCompleted) g->fabric_status = info.status;
}

// The live reading's health part (sense/nvml/nvml_reading.h), kept in the
// Gpu, with what only a one-shot look asks: the ECC mode, pages pending
// retirement and the fabric.
void query_health(NvmlCaller& call, const NvmlFunctions& f, nvml::Device d, Gpu* g) {
  query_ecc_mode(call, f, d, g);
  read_health(call, f, d, &g->health);
  if (g->ecc_enabled == false) g->health.ecc_corrected = g->health.ecc_uncorrected = std::nullopt;
  query_retired_pages(call, f, d, g);
  query_fabric(call, f, d, g);
}

// The GPU's handle, or the Problem that kept NVML from giving one.
Gpu gpu_handle(const Nvml& nvml, unsigned index, nvml::Device* handle) {
  Gpu g;
  g.index = static_cast<int>(index);
  nvml::Return rc;
  {
    trace::Scope t(nvml.fn.handle.name);
    rc = nvml.fn.handle.call(index, handle);
  }
  if (rc != nvml::kSuccess) {
    *handle = nullptr;
    g.problem = nvml_problem(call_name(nvml.fn.handle.name, gpu_subject(index)), rc,
                             nvml_error_text(nvml, rc));
  }
  return g;
}

void query_gpu(const Nvml& nvml, const NvmlQuery& q, nvml::Device handle, Gpu* g,
               std::vector<Problem>* problems) {
  NvmlCaller call(nvml, gpu_subject(static_cast<unsigned>(g->index)), problems, g);
  query_identity(call, nvml.fn, handle, g);
  query_mig(call, nvml.fn, handle, g);
  // No rule needs these, and NVML is slow to answer them (docs/performance.md).
  if (q.with_details) {
    query_modes(call, nvml.fn, handle, g);
    query_limits(call, nvml.fn, handle, g);
    query_pcie(call, nvml.fn, handle, &g->pcie);
    query_clocks(call, nvml.fn, handle, g);
    g->nvlink_active_links = active_nvlinks(call, nvml.fn, handle);
  }
  query_locality(call, nvml.fn, q, handle, g);
  if (q.with_health) query_health(call, nvml.fn, handle, g);
}

template <typename T>
void append(std::vector<T>* to, std::vector<std::vector<T>>&& parts) {
  for (std::vector<T>& part : parts)
    to->insert(to->end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
}

// Where sysfs puts a GPU: the resolved /sys/bus/pci/devices/<address> link.
std::optional<std::string> pci_path(const NvmlQuery& q, const std::optional<std::string>& bus_id) {
  std::optional<std::string> dir = pci_device_dir(bus_id);
  std::string path, err;
  if (!dir || !fs::resolve(q.root, *dir, &path, &err)) return std::nullopt;
  return path;
}

std::string pair_subject(const Gpu& a, const Gpu& b) {
  return "GPU " + std::to_string(a.index) + ", GPU " + std::to_string(b.index);
}

// The topology level from sysfs's PCI tree, else from NVML. NVML's query
// is slow (it builds its topology first), the files are not. Run once the GPUs' own queries have given their
// bus ids, so a pair asks NVML nothing about a single GPU.
std::optional<std::string> pair_topology(const Nvml& nvml, const NvmlQuery& q, const Gpu& a,
                                         const Gpu& b, nvml::Device da, nvml::Device db,
                                         std::vector<Problem>* problems) {
  {
    trace::Scope t("sysfs PCI topology");
    // The NUMA nodes are the GPUs' own, read with their CPU affinity.
    std::optional<std::string> pa = pci_path(q, a.pci_bus_id), pb = pci_path(q, b.pci_bus_id);
    if (pa && pb)
      if (auto level = pci_topology(*pa, *pb, a.numa_node, b.numa_node)) return level;
  }
  NvmlCaller call(nvml, pair_subject(a, b), problems);
  int level = 0;
  if (call(nvml.fn.topology, da, db, &level)) return topology_name(level);
  return std::nullopt;
}

GpuPair query_pair(const Nvml& nvml, const NvmlQuery& q, const Gpu& a, const Gpu& b,
                   nvml::Device da, nvml::Device db, std::vector<Problem>* problems) {
  NvmlCaller call(nvml, pair_subject(a, b), problems);
  GpuPair p;
  p.a = a.index;
  p.b = b.index;
  int read = 0, nvlink = 0;
  if (call(nvml.fn.p2p_status, da, db, nvml::kP2pCapsRead, &read))
    p.p2p_read = p2p_status_name(read);
  // Over NVLink: only doctor's P2P check reads it.
  if (q.with_details && call(nvml.fn.p2p_status, da, db, nvml::kP2pCapsNvlink, &nvlink))
    p.p2p_nvlink = p2p_status_name(nvlink);
  return p;
}

}  // namespace

void query_nvml_system(const Nvml& nvml, Nvidia* nvidia) {
  NvmlCaller call(nvml, "", &nvidia->problems);
  char version[nvml::kDriverVersionBufferSize] = {};
  if (call(nvml.fn.driver_version, version, nvml::kDriverVersionBufferSize))
    nvidia->driver_version = c_string(version);
  int cuda = 0;
  if (call(nvml.fn.cuda_driver_version, &cuda)) nvidia->cuda_driver_version = cuda;
}

bool query_nvml_devices(const Nvml& nvml, const NvmlQuery& query, std::vector<Gpu>* gpus,
                        std::vector<GpuPair>* pairs, std::vector<Problem>* problems) {
  unsigned count = 0;
  nvml::Return rc;
  {
    trace::Scope t(nvml.fn.count.name);
    rc = nvml.fn.count.call(&count);
  }
  if (rc != nvml::kSuccess) {
    problems->push_back(nvml_problem(nvml.fn.count.name, rc, nvml_error_text(nvml, rc)));
    return false;
  }
  std::vector<nvml::Device> handles(count, nullptr);
  std::vector<Gpu> found(count);
  {
    trace::Scope t("NVML handles (wall)");
    parallel_for(count, kMaxNvmlThreads, [&](std::size_t i) {
      found[i] = gpu_handle(nvml, static_cast<unsigned>(i), &handles[i]);
    });
  }
  // One task per GPU, then one per pair of GPUs that have a handle (P2P
  // status), all at once; each pair's topology level follows.
  std::vector<std::pair<std::size_t, std::size_t>> todo;
  for (std::size_t a = 0; a < count; ++a)
    for (std::size_t b = a + 1; b < count; ++b)
      if (!found[a].problem && !found[b].problem) todo.emplace_back(a, b);
  std::vector<GpuPair> found_pairs(todo.size());
  std::vector<std::vector<Problem>> gpu_problems(count), pair_problems(todo.size());
  {
    trace::Scope t("NVML GPUs and pairs (wall)");
    parallel_for(count + todo.size(), kMaxNvmlThreads, [&](std::size_t i) {
      if (i < count) {
        if (!found[i].problem) query_gpu(nvml, query, handles[i], &found[i], &gpu_problems[i]);
        return;
      }
      auto [a, b] = todo[i - count];
      found_pairs[i - count] =
          query_pair(nvml, query, found[a], found[b], handles[a], handles[b],
                     &pair_problems[i - count]);
    });
  }
  // A GPU lost meanwhile has no pairs, as if they had not been asked.
  {
    trace::Scope t("pair topology (wall)");
    parallel_for(todo.size(), kMaxNvmlThreads, [&](std::size_t k) {
      auto [a, b] = todo[k];
      if (found[a].problem || found[b].problem) return;
      found_pairs[k].topology = pair_topology(nvml, query, found[a], found[b], handles[a],
                                              handles[b], &pair_problems[k]);
    });
  }
  for (std::size_t k = 0; k < todo.size(); ++k) {
    auto [a, b] = todo[k];
    if (found[a].problem || found[b].problem) continue;
    pairs->push_back(std::move(found_pairs[k]));
    gpu_problems.push_back(std::move(pair_problems[k]));
  }
  gpus->insert(gpus->end(), std::make_move_iterator(found.begin()),
               std::make_move_iterator(found.end()));
  append(problems, std::move(gpu_problems));
  return true;
}

std::string format_pci_bus_id(unsigned domain, unsigned bus, unsigned device) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.0", domain, bus, device);
  return buf;
}

std::optional<std::string> compute_mode_name(int mode) {
  switch (mode) {
    case nvml::kComputeModeDefault:
      return "default";
    case nvml::kComputeModeExclusiveThread:
      return "exclusive_thread";
    case nvml::kComputeModeProhibited:
      return "prohibited";
    case nvml::kComputeModeExclusiveProcess:
      return "exclusive_process";
    default:
      return std::nullopt;
  }
}

std::optional<std::string> topology_name(int level) {
  switch (level) {
    case nvml::kTopologyInternal:
      return "internal";
    case nvml::kTopologySingle:
      return "single";
    case nvml::kTopologyMultiple:
      return "multiple";
    case nvml::kTopologyHostbridge:
      return "hostbridge";
    case nvml::kTopologyNode:
      return "node";
    case nvml::kTopologySystem:
      return "system";
    default:
      return std::nullopt;
  }
}

std::optional<std::string> fabric_state_name(unsigned char state) {
  switch (state) {
    case nvml::kFabricStateNotSupported:
      return "not_supported";
    case nvml::kFabricStateNotStarted:
      return "not_started";
    case nvml::kFabricStateInProgress:
      return "in_progress";
    case nvml::kFabricStateCompleted:
      return "completed";
    default:
      return std::nullopt;
  }
}

std::string p2p_status_name(int status) {
  switch (status) {
    case nvml::kP2pStatusOk:
      return "ok";
    case nvml::kP2pStatusChipsetNotSupported:
      return "chipset_not_supported";
    case nvml::kP2pStatusGpuNotSupported:
      return "gpu_not_supported";
    case nvml::kP2pStatusIohTopologyNotSupported:
      return "topology_not_supported";
    case nvml::kP2pStatusDisabledByRegkey:
      return "disabled_by_regkey";
    case nvml::kP2pStatusNotSupported:
      return "not_supported";
    default:
      return "unknown";
  }
}

}  // namespace gpuenv

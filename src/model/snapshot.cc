#include "model/snapshot.h"

#include "model/json_strict.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "model/json_opt.h"
#include "model/json_text.h"
#include "model/measurement_json.h"

namespace gpuenv {
namespace {

using nlohmann::json;

// ---- writing ----

json to_json_problem(const Problem& p) {
  return {{"source", p.source}, {"code", p.code}, {"message", p.message}, {"fix", p.fix}};
}

json problems_json(const std::vector<Problem>& ps) {
  json a = json::array();
  for (const auto& p : ps) a.push_back(to_json_problem(p));
  return a;
}

json cc_json(const std::optional<ComputeCapability>& cc) {
  if (!cc) return nullptr;
  return cc_string(*cc);
}

json mig_attributes_json(const std::optional<MigAttributes>& a) {
  if (!a) return nullptr;
  return {{"multiprocessors", a->multiprocessors},
          {"copy_engines", a->copy_engines},
          {"decoders", a->decoders},
          {"encoders", a->encoders},
          {"jpeg_decoders", a->jpeg_decoders},
          {"ofas", a->ofas},
          {"gpu_instance_slices", a->gpu_instance_slices},
          {"compute_instance_slices", a->compute_instance_slices},
          {"memory_mib", a->memory_mib}};
}

json gpu_json(const Gpu& g) {
  json mig = json::array();
  for (const auto& d : g.mig_devices)
    mig.push_back({{"index", d.index},
                   {"uuid", d.uuid},
                   {"name", opt(d.name)},
                   {"memory_total_bytes", opt(d.memory_total_bytes)},
                   {"gpu_instance_id", opt(d.gpu_instance_id)},
                   {"compute_instance_id", opt(d.compute_instance_id)},
                   {"attributes", mig_attributes_json(d.attributes)}});
  return {{"index", g.index},
          {"name", opt(g.name)},
          {"uuid", opt(g.uuid)},
          {"pci_bus_id", opt(g.pci_bus_id)},
          {"pci_class", opt(g.pci_class)},
          {"compute_capability", cc_json(g.compute_capability)},
          {"memory_total_bytes", opt(g.memory_total_bytes)},
          {"memory_free_bytes", opt(g.memory_free_bytes)},
          {"mig_enabled", opt(g.mig_enabled)},
          {"mig_devices", mig},
          {"persistence_mode", opt(g.persistence_mode)},
          {"compute_mode", opt(g.compute_mode)},
          {"pcie",
           {{"gen_current", opt(g.pcie.gen_current)},
            {"gen_max", opt(g.pcie.gen_max)},
            {"width_current", opt(g.pcie.width_current)},
            {"width_max", opt(g.pcie.width_max)}}},
          {"power_limit_mw", opt(g.power_limit_mw)},
          {"max_sm_clock_mhz", opt(g.max_sm_clock_mhz)},
          {"max_memory_clock_mhz", opt(g.max_memory_clock_mhz)},
          {"nvlink_active_links", opt(g.nvlink_active_links)},
          {"cpu_affinity", opt(g.cpu_affinity)},
          {"numa_node", opt(g.numa_node)},
          {"multiprocessor_count", opt(g.multiprocessor_count)},
          {"clocks_event_reasons", opt(g.health.clock_events)},
          {"temperature_c", opt(g.health.temperature_c)},
          {"ecc_enabled", opt(g.ecc_enabled)},
          {"ecc_uncorrected_volatile", opt(g.health.ecc_uncorrected)},
          {"retired_pages_pending", opt(g.retired_pages_pending)},
          {"row_remap_pending", opt(g.health.row_remap_pending)},
          {"row_remap_failure", opt(g.health.row_remap_failure)},
          {"fabric_state", opt(g.fabric_state)},
          {"fabric_status", opt(g.fabric_status)},
          {"problem", g.problem ? to_json_problem(*g.problem) : json(nullptr)}};
}

json host_json(const Host& h) {
  json numa = json::array();
  for (const auto& n : h.numa_nodes)
    numa.push_back({{"index", n.index}, {"cpus", n.cpus}, {"memory_bytes", opt(n.memory_bytes)}});
  json nets = json::array();
  for (const auto& i : h.interfaces)
    nets.push_back({{"name", i.name},
                    {"up", opt(i.up)},
                    {"loopback", i.loopback},
                    {"virtual", i.virtual_device}});
  json ibs = json::array();
  for (const auto& d : h.ib_devices)
    ibs.push_back({{"name", d.name}, {"link_layer", opt(d.link_layer)}, {"state", opt(d.state)}});
  json j = {{"hostname", opt(h.hostname)},
          {"online_cpus", opt(h.online_cpus)},
          {"affinity_cpus", opt(h.affinity_cpus)},
          {"cgroup_cpu_quota", opt(h.cgroup_cpu_quota)},
          {"usable_cpus", opt(h.usable_cpus)},
          {"memory_total_bytes", opt(h.memory_total_bytes)},
          {"cgroup_memory_limit_bytes", opt(h.cgroup_memory_limit_bytes)},
          {"numa_nodes", numa},
          {"shm_bytes", opt(h.shm_bytes)},
          {"container", opt(h.container)},
          {"nvidia_device_nodes", h.nvidia_device_nodes},
          {"ib_devices", ibs},
          {"interfaces", nets},
          {"memlock_bytes", opt(h.memlock_bytes)},
          {"problems", problems_json(h.problems)},
          {"cpu_cores", opt(h.cpu_cores)}};
  if (h.shm_writable) j["shm_writable"] = *h.shm_writable;  // only when tried
  if (h.shm_error) j["shm_error"] = *h.shm_error;
  if (h.product_name) j["product_name"] = *h.product_name;  // only when known
  return j;
}

json binary_json(const CudaBinary& b) {
  return {{"path", b.path},       {"package", opt(b.package)},
          {"targets", b.targets}, {"error", opt(b.error)},
          {"distribution", opt(b.distribution)}};
}

// ---- reading ----

struct SnapshotError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* type_name(const json& j) { return j.type_name(); }

/// A cursor into the document that knows its path, for error messages.
class Reader {
 public:
  Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  const json& raw() const { return j_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw SnapshotError((path_.empty() ? std::string("snapshot") : path_) + ": " + what);
  }

  Reader field(const char* key) const {
    if (!j_.is_object()) fail(std::string("expected an object, got ") + type_name(j_));
    auto it = j_.find(key);
    static const json kNull;
    return Reader(it == j_.end() ? kNull : *it, child(key));
  }
  Reader at(size_t i) const { return Reader(j_[i], path_ + "[" + std::to_string(i) + "]"); }
  bool is_null() const { return j_.is_null(); }

  /// The elements; more than `most` is an error naming the limit.
  std::vector<Reader> array(std::size_t most = SIZE_MAX, const char* what = "entries") const {
    std::vector<Reader> out;
    if (j_.is_null()) return out;
    if (!j_.is_array()) fail(std::string("expected an array, got ") + type_name(j_));
    if (j_.size() > most)
      fail(std::to_string(j_.size()) + " " + what + ", more than the " + std::to_string(most) +
           " a snapshot may hold");
    for (size_t i = 0; i < j_.size(); ++i) out.push_back(at(i));
    return out;
  }

  std::string str() const {
    if (!j_.is_string()) fail(std::string("expected a string, got ") + type_name(j_));
    return j_.get<std::string>();
  }
  bool boolean() const {
    if (!j_.is_boolean()) fail(std::string("expected true or false, got ") + type_name(j_));
    return j_.get<bool>();
  }
  double number() const {
    if (!j_.is_number()) fail(std::string("expected a number, got ") + type_name(j_));
    return j_.get<double>();
  }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) const {
    if (!j_.is_number_integer())
      fail(std::string("expected an integer, got ") + type_name(j_));
    if (j_.is_number_unsigned() && j_.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail("value out of range");
    auto v = j_.get<std::int64_t>();
    if (v < lo || v > hi) fail("value " + std::to_string(v) + " out of range");
    return v;
  }
  std::uint64_t u64() const {
    if (!j_.is_number_unsigned() && !(j_.is_number_integer() && j_.get<std::int64_t>() >= 0))
      fail(std::string("expected a non-negative integer, got ") + type_name(j_));
    return j_.get<std::uint64_t>();
  }

 private:
  std::string child(const char* key) const {
    return path_.empty() ? std::string(key) : path_ + "." + key;
  }
  const json& j_;
  std::string path_;
};

constexpr std::int64_t kIntMax = 0x7fffffff;

void get(const Reader& r, std::optional<std::string>* v) {
  if (!r.is_null()) *v = r.str();
}
void get(const Reader& r, std::optional<bool>* v) {
  if (!r.is_null()) *v = r.boolean();
}
void get(const Reader& r, std::optional<int>* v) {
  if (!r.is_null()) *v = static_cast<int>(r.integer(0, kIntMax));  // every int field is a count, index or version
}
void get(const Reader& r, std::optional<std::uint32_t>* v) {
  if (!r.is_null()) *v = static_cast<std::uint32_t>(r.integer(0, 0xffffffffLL));
}
void get(const Reader& r, std::optional<std::uint64_t>* v) {
  if (!r.is_null()) *v = r.u64();
}
void get(const Reader& r, std::optional<double>* v) {
  if (!r.is_null()) *v = r.number();
}
void get(const Reader& r, std::optional<std::vector<int>>* v) {
  if (r.is_null()) return;
  std::vector<int> out;
  for (const auto& e : r.array()) out.push_back(static_cast<int>(e.integer(0, kIntMax)));
  *v = std::move(out);
}
template <typename T>
void get(const Reader& r, const char* key, T* v) {
  get(r.field(key), v);
}
// An int field whose range is not the counts' 0 ... 2^31-1.
void get(const Reader& r, const char* key, std::optional<int>* v, std::int64_t lo,
         std::int64_t hi) {
  if (auto f = r.field(key); !f.is_null()) *v = static_cast<int>(f.integer(lo, hi));
}

ComputeCapability parse_cc(const Reader& r) {
  std::string s = r.str();
  auto dot = s.find('.');
  auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 3 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  if (dot == std::string::npos || !digits(s.substr(0, dot)) || !digits(s.substr(dot + 1)))
    r.fail("expected \"MAJOR.MINOR\" such as \"9.0\", got \"" + s + "\"");
  return {std::stoi(s.substr(0, dot)), std::stoi(s.substr(dot + 1))};
}

Problem read_problem(const Reader& r) {
  Problem p;
  p.source = r.field("source").str();
  p.code = r.field("code").str();
  p.message = r.field("message").str();
  if (!r.field("fix").is_null()) p.fix = r.field("fix").str();
  return p;
}

std::vector<Problem> read_problems(const Reader& r) {
  std::vector<Problem> out;
  for (const auto& e : r.array()) out.push_back(read_problem(e));
  return out;
}

std::optional<MigAttributes> read_mig_attributes(const Reader& r) {
  if (r.is_null()) return std::nullopt;
  MigAttributes a;
  auto count = [&](const char* key) { return static_cast<int>(r.field(key).integer(0, kIntMax)); };
  a.multiprocessors = count("multiprocessors");
  a.copy_engines = count("copy_engines");
  a.decoders = count("decoders");
  a.encoders = count("encoders");
  a.jpeg_decoders = count("jpeg_decoders");
  a.ofas = count("ofas");
  a.gpu_instance_slices = count("gpu_instance_slices");
  a.compute_instance_slices = count("compute_instance_slices");
  a.memory_mib = r.field("memory_mib").u64();
  return a;
}

MigDevice read_mig(const Reader& r) {
  MigDevice d;
  d.index = static_cast<int>(r.field("index").integer(0, kIntMax));
  d.uuid = r.field("uuid").str();
  get(r, "name", &d.name);
  get(r, "memory_total_bytes", &d.memory_total_bytes);
  get(r, "gpu_instance_id", &d.gpu_instance_id);
  get(r, "compute_instance_id", &d.compute_instance_id);
  d.attributes = read_mig_attributes(r.field("attributes"));
  return d;
}

Gpu read_gpu(const Reader& r) {
  Gpu g;
  g.index = static_cast<int>(r.field("index").integer(0, kIntMax));
  get(r, "name", &g.name);
  get(r, "uuid", &g.uuid);
  get(r, "pci_bus_id", &g.pci_bus_id);
  get(r, "pci_class", &g.pci_class);
  if (auto cc = r.field("compute_capability"); !cc.is_null()) g.compute_capability = parse_cc(cc);
  get(r, "memory_total_bytes", &g.memory_total_bytes);
  get(r, "memory_free_bytes", &g.memory_free_bytes);
  get(r, "mig_enabled", &g.mig_enabled);
  for (const auto& e : r.field("mig_devices").array(kMaxSnapshotMigDevices, "MIG devices"))
    g.mig_devices.push_back(read_mig(e));
  get(r, "persistence_mode", &g.persistence_mode);
  get(r, "compute_mode", &g.compute_mode);
  Reader p = r.field("pcie");
  if (!p.is_null()) {
    get(p, "gen_current", &g.pcie.gen_current);
    get(p, "gen_max", &g.pcie.gen_max);
    get(p, "width_current", &g.pcie.width_current);
    get(p, "width_max", &g.pcie.width_max);
  }
  get(r, "power_limit_mw", &g.power_limit_mw);
  get(r, "max_sm_clock_mhz", &g.max_sm_clock_mhz);
  get(r, "max_memory_clock_mhz", &g.max_memory_clock_mhz);
  get(r, "nvlink_active_links", &g.nvlink_active_links);
  get(r, "cpu_affinity", &g.cpu_affinity);
  get(r, "numa_node", &g.numa_node);
  get(r, "multiprocessor_count", &g.multiprocessor_count);
  get(r, "clocks_event_reasons", &g.health.clock_events);
  get(r, "temperature_c", &g.health.temperature_c, -273, 1000);
  get(r, "ecc_enabled", &g.ecc_enabled);
  get(r, "ecc_uncorrected_volatile", &g.health.ecc_uncorrected);
  get(r, "retired_pages_pending", &g.retired_pages_pending);
  get(r, "row_remap_pending", &g.health.row_remap_pending);
  get(r, "row_remap_failure", &g.health.row_remap_failure);
  get(r, "fabric_state", &g.fabric_state);
  get(r, "fabric_status", &g.fabric_status, -kIntMax, kIntMax);
  if (auto pr = r.field("problem"); !pr.is_null()) g.problem = read_problem(pr);
  return g;
}

CudaBinary read_binary(const Reader& r) {
  CudaBinary b;
  b.path = r.field("path").str();
  get(r, "package", &b.package);
  for (const auto& e : r.field("targets").array()) b.targets.push_back(e.str());
  get(r, "error", &b.error);
  get(r, "distribution", &b.distribution);
  return b;
}

GpuPair read_pair(const Reader& r) {
  GpuPair p;
  p.a = static_cast<int>(r.field("a").integer(0, kIntMax));
  p.b = static_cast<int>(r.field("b").integer(0, kIntMax));
  get(r, "topology", &p.topology);
  get(r, "p2p_read", &p.p2p_read);
  get(r, "p2p_nvlink", &p.p2p_nvlink);
  return p;
}

Host read_host(const Reader& r) {
  Host h;
  get(r, "hostname", &h.hostname);
  get(r, "product_name", &h.product_name);
  get(r, "online_cpus", &h.online_cpus);
  get(r, "affinity_cpus", &h.affinity_cpus);
  get(r, "cgroup_cpu_quota", &h.cgroup_cpu_quota);
  get(r, "usable_cpus", &h.usable_cpus);
  get(r, "memory_total_bytes", &h.memory_total_bytes);
  get(r, "cgroup_memory_limit_bytes", &h.cgroup_memory_limit_bytes);
  for (const auto& e : r.field("numa_nodes").array()) {
    NumaNode n;
    n.index = static_cast<int>(e.field("index").integer(0, kIntMax));
    std::optional<std::vector<int>> cpus;
    get(e, "cpus", &cpus);
    if (cpus) n.cpus = *cpus;
    get(e, "memory_bytes", &n.memory_bytes);
    h.numa_nodes.push_back(std::move(n));
  }
  get(r, "shm_bytes", &h.shm_bytes);
  get(r, "shm_writable", &h.shm_writable);
  get(r, "shm_error", &h.shm_error);
  get(r, "container", &h.container);
  for (const auto& e : r.field("nvidia_device_nodes").array()) h.nvidia_device_nodes.push_back(e.str());
  for (const auto& e : r.field("ib_devices").array()) {
    IbDevice d;
    d.name = e.field("name").str();
    get(e, "link_layer", &d.link_layer);
    get(e, "state", &d.state);
    h.ib_devices.push_back(std::move(d));
  }
  for (const auto& e : r.field("interfaces").array()) {
    NetInterface i;
    i.name = e.field("name").str();
    get(e, "up", &i.up);
    if (!e.field("loopback").is_null()) i.loopback = e.field("loopback").boolean();
    if (!e.field("virtual").is_null()) i.virtual_device = e.field("virtual").boolean();
    h.interfaces.push_back(std::move(i));
  }
  get(r, "memlock_bytes", &h.memlock_bytes);
  h.problems = read_problems(r.field("problems"));
  if (auto cores = r.field("cpu_cores"); !cores.is_null()) {
    h.cpu_cores.emplace();
    for (const auto& e : cores.array()) {
      std::optional<std::vector<int>> core;
      get(e, &core);
      h.cpu_cores->push_back(core.value_or(std::vector<int>{}));
    }
  }
  return h;
}

// At most kMaxSnapshotGpus GPUs, and kMaxSnapshotMigDevices MIG devices
// over all of them.
void read_gpus(const Reader& r, std::vector<Gpu>* gpus) {
  std::size_t mig = 0;
  for (const auto& e : r.array(kMaxSnapshotGpus, "GPUs")) {
    gpus->push_back(read_gpu(e));
    if ((mig += gpus->back().mig_devices.size()) > kMaxSnapshotMigDevices)
      e.field("mig_devices").fail("more than " + std::to_string(kMaxSnapshotMigDevices) +
                                  " MIG devices in all, the most a snapshot may hold");
  }
}

Machine read_machine(const Reader& r) {
  if (!r.raw().is_object()) r.fail(std::string("expected a JSON object, got ") + type_name(r.raw()));
  Machine m;
  Reader v = r.field("schema_version");
  if (v.is_null()) r.fail("schema_version is missing: is this a gpuenv snapshot (gpuenv detect --json)?");
  m.schema_version = static_cast<int>(v.integer(1, kIntMax));
  if (m.schema_version > kSnapshotSchemaVersion)
    v.fail("version " + std::to_string(m.schema_version) + " is newer than this gpuenv understands (" +
           std::to_string(kSnapshotSchemaVersion) + "); upgrade gpuenv");
  get(r, "gpuenv_version", &m.gpuenv_version);
  get(r, "sensed_at", &m.sensed_at);
  Reader n = r.field("nvidia");
  if (!n.is_null()) {
    get(n, "nvml_library", &m.nvidia.nvml_library);
    get(n, "driver_version", &m.nvidia.driver_version);
    get(n, "cuda_driver_version", &m.nvidia.cuda_driver_version);
    get(n, "cuda_library", &m.nvidia.cuda_library);
    get(n, "cuda_init_result", &m.nvidia.cuda_init_result);
    get(n, "dcgm_library", &m.nvidia.dcgm_library);
    m.nvidia.problems = read_problems(n.field("problems"));
  }
  read_gpus(r.field("gpus"), &m.gpus);
  for (const auto& e : r.field("pairs").array()) m.pairs.push_back(read_pair(e));
  if (auto h = r.field("host"); !h.is_null()) m.host = read_host(h);
  if (auto t = r.field("torch"); !t.is_null()) {
    Torch torch;
    torch.version = t.field("version").str();
    get(t, "cuda_version", &torch.cuda_version);
    get(t, "path", &torch.path);
    get(t, "python", &torch.python);
    get(t, "bytecode_cached", &torch.bytecode_cached);
    if (auto l = t.field("libtorch_cuda"); !l.is_null()) torch.libtorch_cuda = read_binary(l);
    for (const auto& e : t.field("extensions").array()) torch.extensions.push_back(read_binary(e));
    m.torch = torch;
  }
  Reader env = r.field("env");
  if (!env.is_null()) {
    if (!env.raw().is_object()) env.fail("expected an object of strings");
    for (const auto& [k, val] : env.raw().items())
      m.env[k] = Reader(val, env.path() + "." + k).str();
  }
  Reader base = r.field("base_image_env");
  if (!base.is_null()) {
    if (!base.raw().is_object()) base.fail("expected an object of strings");
    for (const auto& [k, val] : base.raw().items())
      m.base_image_env[k] = Reader(val, base.path() + "." + k).str();
  }
  if (std::string e; !measurements_from_json(r.raw(), &m.measurements, &e)) r.fail(e);
  return m;
}

// Watches the parser's events for a key given twice in one object (the
// parser keeps the last silently) and remembers the first, with its path.

}  // namespace

json machine_json(const Machine& m) {
  json gpus = json::array();
  for (const auto& g : m.gpus) gpus.push_back(gpu_json(g));
  json pairs = json::array();
  for (const auto& p : m.pairs)
    pairs.push_back({{"a", p.a},
                     {"b", p.b},
                     {"topology", opt(p.topology)},
                     {"p2p_read", opt(p.p2p_read)},
                     {"p2p_nvlink", opt(p.p2p_nvlink)}});
  json torch = nullptr;
  if (m.torch) {
    json ext = json::array();
    for (const auto& b : m.torch->extensions) ext.push_back(binary_json(b));
    torch = {{"version", m.torch->version},
             {"cuda_version", opt(m.torch->cuda_version)},
             {"path", opt(m.torch->path)},
             {"python", opt(m.torch->python)},
             {"bytecode_cached", opt(m.torch->bytecode_cached)},
             {"libtorch_cuda", m.torch->libtorch_cuda ? binary_json(*m.torch->libtorch_cuda)
                                                      : json(nullptr)},
             {"extensions", ext}};
  }
  json j = {{"schema_version", m.schema_version},
            {"gpuenv_version", opt(m.gpuenv_version)},
            {"sensed_at", opt(m.sensed_at)},
            {"nvidia",
             {{"nvml_library", opt(m.nvidia.nvml_library)},
              {"driver_version", opt(m.nvidia.driver_version)},
              {"cuda_driver_version", opt(m.nvidia.cuda_driver_version)},
              {"cuda_library", opt(m.nvidia.cuda_library)},
              {"cuda_init_result", opt(m.nvidia.cuda_init_result)},
              {"problems", problems_json(m.nvidia.problems)}}},
            {"gpus", gpus},
            {"pairs", pairs},
            {"host", host_json(m.host)},
            {"torch", torch},
            {"env", m.env}};
  if (!m.base_image_env.empty()) j["base_image_env"] = m.base_image_env;
  if (m.nvidia.dcgm_library) j["nvidia"]["dcgm_library"] = *m.nvidia.dcgm_library;  // only where doctor found it
  measurements_to_json(m.measurements, &j);
  return j;
}

// ordered output keeps diffs of committed fixtures readable
std::string machine_to_json(const Machine& m, int indent) { return json_document(machine_json(m), indent); }

bool machine_from_json(const std::string& text, Machine* out, std::string* err) {
  json j;
  if (!parse_json_strict(text, &j, err)) return false;
  try {
    *out = read_machine(Reader(j, ""));
  } catch (const SnapshotError& e) {
    *err = e.what();
    return false;
  } catch (const json::exception& e) {
    *err = e.what();
    return false;
  }
  return true;
}

}  // namespace gpuenv

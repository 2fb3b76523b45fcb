#include "builders.h"

#include <algorithm>
#include <cstdio>

namespace gpuenv::testing {
namespace {

constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;
constexpr std::uint64_t kMiB = 1024ull * 1024;

std::string hex_uuid(const std::string& prefix, int salt, int index) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s-%08x-%04x-%04x-%04x-%012x", prefix.c_str(), 0x1a2b0000 + salt,
                index, 0x4000 + salt, 0x8000 + index, 0xabc000 + salt * 16 + index);
  return buf;
}

std::vector<int> range(int first, int count) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i);
  return v;
}

int name_salt(const std::string& s) {
  int h = 0;
  for (char c : s) h = (h * 31 + static_cast<unsigned char>(c)) & 0xfff;
  return h;
}

// What nvmlDeviceGetAttributes_v2 reports for an A100's MIG profiles (NVIDIA's
// MIG user guide, "A100 MIG profiles"): SMs, shared copy/decoder/encoder/JPEG/
// OFA engines, GPU and compute instance slices. nullopt for other profiles.
std::optional<MigAttributes> mig_profile_attributes(const std::string& profile, std::uint64_t memory_bytes) {
  struct Row { const char* profile; MigAttributes a; };
  static const Row kRows[] = {
      {"1g.10gb", {14, 1, 0, 0, 0, 0, 1, 1, 0}}, {"2g.20gb", {28, 2, 1, 0, 0, 0, 2, 2, 0}},
      {"3g.40gb", {42, 3, 2, 0, 0, 0, 3, 3, 0}}, {"4g.40gb", {56, 4, 2, 0, 0, 0, 4, 4, 0}},
      {"7g.80gb", {98, 7, 5, 0, 1, 1, 7, 7, 0}},
  };
  for (const Row& r : kRows)
    if (profile == r.profile) {
      MigAttributes a = r.a;
      a.memory_mib = memory_bytes / kMiB;
      return a;
    }
  return std::nullopt;
}

// sysfs's PCI class: a GeForce drives displays (VGA), the others are 3D
// controllers; an integrated GPU (no PCIe link) has none.
std::optional<std::string> pci_class(const GpuModel& model) {
  if (model.pcie_gen_max == 0) return std::nullopt;
  return model.name.find("GeForce") != std::string::npos ? "0x030000" : "0x030200";
}

}  // namespace

namespace models {
// name, cc, memory, pcie gen/width, power mW, max SM/mem clock MHz, nvlinks
GpuModel gtx1080() { return {"NVIDIA GeForce GTX 1080", {6, 1}, 8 * kGiB, 3, 16, 180000, 1911, 5005, 0}; }
GpuModel v100() { return {"Tesla V100-SXM2-16GB", {7, 0}, 16 * kGiB, 3, 16, 300000, 1530, 877, 6}; }
GpuModel t4() { return {"Tesla T4", {7, 5}, 15360 * kMiB, 3, 16, 70000, 1590, 5001, 0}; }
GpuModel a10() { return {"NVIDIA A10", {8, 6}, 23028 * kMiB, 4, 16, 150000, 1695, 6251, 0}; }
GpuModel a100_80gb() { return {"NVIDIA A100-SXM4-80GB", {8, 0}, 81920 * kMiB, 4, 16, 400000, 1410, 1593, 12}; }
GpuModel rtx3090() { return {"NVIDIA GeForce RTX 3090", {8, 6}, 24 * kGiB, 4, 16, 350000, 2100, 9751, 0}; }
GpuModel rtx4090() { return {"NVIDIA GeForce RTX 4090", {8, 9}, 24 * kGiB, 4, 16, 450000, 3105, 10501, 0}; }
GpuModel l4() { return {"NVIDIA L4", {8, 9}, 23034 * kMiB, 4, 16, 72000, 2040, 6251, 0}; }
GpuModel h100() { return {"NVIDIA H100 80GB HBM3", {9, 0}, 81559 * kMiB, 5, 16, 700000, 1980, 2619, 18}; }
GpuModel h200() { return {"NVIDIA H200", {9, 0}, 143771 * kMiB, 5, 16, 700000, 1980, 3201, 18}; }
GpuModel b200() { return {"NVIDIA B200", {10, 0}, 183359 * kMiB, 5, 16, 1000000, 1965, 3996, 18}; }
GpuModel rtx5090() { return {"NVIDIA GeForce RTX 5090", {12, 0}, 32607 * kMiB, 5, 16, 575000, 3090, 14001, 0}; }
GpuModel jetson_orin() { return {"Orin", {8, 7}, 62841 * kMiB, 0, 0, 0, 1300, 3200, 0}; }
}  // namespace models

MachineBuilder::MachineBuilder() {
  m_.gpuenv_version = "0.1.0";
  m_.sensed_at = "2026-11-29T12:00:00Z";
  m_.nvidia.nvml_library = "libnvidia-ml.so.1";
  m_.nvidia.driver_version = "580.95.05";
  m_.nvidia.cuda_driver_version = 13000;
  Host& h = m_.host;
  h.hostname = "testhost";
  h.memory_total_bytes = 512 * kGiB;
  h.shm_bytes = 64 * kGiB;
  h.interfaces = {{"lo", true, true, false}, {"eth0", true, false, false}};
  layout_numa();
}

void MachineBuilder::layout_numa() {
  Host& h = m_.host;
  int cores = sockets_ * cores_per_socket_, threads = std::max(1, threads_per_core_);
  int total = cores * threads;
  h.online_cpus = total;
  h.affinity_cpus = range(0, total);
  h.usable_cpus = total;
  if (h.cgroup_cpu_quota) {
    int q = static_cast<int>(*h.cgroup_cpu_quota + 0.999);
    if (q < total) h.usable_cpus = q;
  }
  h.numa_nodes.clear();
  for (int s = 0; s < sockets_; ++s) {
    std::vector<int> cpus;
    for (int t = 0; t < threads; ++t)
      for (int c : range(t * cores + s * cores_per_socket_, cores_per_socket_)) cpus.push_back(c);
    h.numa_nodes.push_back({s, cpus, *h.memory_total_bytes / sockets_});
  }
  h.cpu_cores.reset();
  if (threads_per_core_ > 0) {
    h.cpu_cores.emplace();
    for (int c = 0; c < cores; ++c) {
      std::vector<int> siblings;
      for (int t = 0; t < threads; ++t) siblings.push_back(c + t * cores);
      h.cpu_cores->push_back(siblings);
    }
  }
  int n = static_cast<int>(m_.gpus.size());
  for (auto& g : m_.gpus) {
    if (!g.cpu_affinity) continue;  // sensed without NVML
    int node = sockets_ > 1 && n > 1 ? (g.index * sockets_) / n : 0;
    g.numa_node = node;
    g.cpu_affinity = h.numa_nodes[node].cpus;
  }
  for (auto& p : m_.pairs)
    if (p.topology == "node" || p.topology == "system")
      p.topology = m_.gpus[p.a].numa_node == m_.gpus[p.b].numa_node ? "node" : "system";
}

MachineBuilder& MachineBuilder::gpus(const GpuModel& model, int n) {
  for (int i = 0; i < n; ++i) {
    Gpu g;
    g.index = static_cast<int>(m_.gpus.size());
    g.name = model.name;
    g.uuid = hex_uuid("GPU", name_salt(model.name), g.index);
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x18 + 0x10 * g.index);
    g.pci_bus_id = bus;
    g.pci_class = pci_class(model);
    g.compute_capability = model.cc;
    g.memory_total_bytes = model.memory_bytes;
    g.memory_free_bytes = model.memory_bytes - 512 * kMiB;
    g.mig_enabled = model.cc.major >= 8 && model.nvlinks > 0 ? std::optional<bool>(false)
                                                             : std::nullopt;
    g.persistence_mode = true;
    g.compute_mode = "default";
    if (model.pcie_gen_max > 0)
      g.pcie = {model.pcie_gen_max, model.pcie_gen_max, model.pcie_width_max, model.pcie_width_max};
    if (model.power_limit_mw) g.power_limit_mw = model.power_limit_mw;
    g.max_sm_clock_mhz = model.max_sm_clock_mhz;
    g.max_memory_clock_mhz = model.max_memory_clock_mhz;
    g.nvlink_active_links = model.nvlinks > 0 ? std::optional<int>(0) : std::nullopt;
    g.cpu_affinity = std::vector<int>{};  // filled by layout_numa
    m_.gpus.push_back(std::move(g));
    nvlinks_.push_back(model.nvlinks);
  }
  // Pairs default to P2P over a PCIe host bridge; with_* replace them.
  m_.pairs.clear();
  for (size_t a = 0; a < m_.gpus.size(); ++a)
    for (size_t b = a + 1; b < m_.gpus.size(); ++b)
      m_.pairs.push_back({static_cast<int>(a), static_cast<int>(b), "node", "ok", "not_supported"});
  layout_numa();
  return *this;
}

MachineBuilder& MachineBuilder::with_nvlink() {
  for (auto& g : m_.gpus) g.nvlink_active_links = nvlinks_.at(g.index);
  for (auto& p : m_.pairs) {
    p.p2p_read = "ok";
    p.p2p_nvlink = "ok";
  }
  return *this;
}

MachineBuilder& MachineBuilder::with_pcie_p2p(const std::string& status, const std::string& topology) {
  for (auto& p : m_.pairs) {
    p.topology = topology;
    p.p2p_read = status;
    p.p2p_nvlink = "not_supported";
  }
  return *this;
}

MachineBuilder& MachineBuilder::with_mig(int index, int n, const std::string& profile,
                                         std::uint64_t memory_bytes) {
  Gpu& g = m_.gpus.at(index);
  g.mig_enabled = true;
  g.mig_devices.clear();
  for (int i = 0; i < n; ++i) {
    MigDevice d;
    d.index = i;
    d.uuid = hex_uuid("MIG", name_salt(profile) + index, i);
    d.name = *g.name + " MIG " + profile;
    d.memory_total_bytes = memory_bytes;
    d.gpu_instance_id = 1 + i;
    d.compute_instance_id = 0;
    d.attributes = mig_profile_attributes(profile, memory_bytes);
    g.mig_devices.push_back(std::move(d));
  }
  return *this;
}

MachineBuilder& MachineBuilder::cpus(int sockets, int cores_per_socket) {
  sockets_ = sockets;
  cores_per_socket_ = cores_per_socket;
  layout_numa();
  return *this;
}

MachineBuilder& MachineBuilder::smt(int threads) {
  threads_per_core_ = threads;
  layout_numa();
  return *this;
}

MachineBuilder& MachineBuilder::cgroup_quota(double cpus) {
  m_.host.cgroup_cpu_quota = cpus;
  layout_numa();
  return *this;
}

MachineBuilder& MachineBuilder::shm(std::uint64_t bytes) {
  m_.host.shm_bytes = bytes;
  return *this;
}

MachineBuilder& MachineBuilder::container(const std::string& kind) {
  m_.host.container = kind;
  if (kind == "docker" || kind == "podman") {
    m_.host.shm_bytes = 64 * kMiB;
    m_.host.interfaces = {{"lo", true, true, false}, {"eth0", true, false, true}};
  }
  return *this;
}

MachineBuilder& MachineBuilder::infiniband(const std::string& name, const std::string& link_layer) {
  m_.host.ib_devices.push_back({name, link_layer, "4: ACTIVE"});
  return *this;
}

MachineBuilder& MachineBuilder::interface(const std::string& name, bool up, bool loopback,
                                          bool virtual_device) {
  m_.host.interfaces.push_back({name, up, loopback, virtual_device});
  return *this;
}

MachineBuilder& MachineBuilder::env(const std::string& name, const std::string& value) {
  m_.env[name] = value;
  return *this;
}

MachineBuilder& MachineBuilder::torch(const std::string& version, const std::string& cuda) {
  Torch t;
  t.version = version;
  if (!cuda.empty()) t.cuda_version = cuda;
  t.path = "/usr/lib/python3/dist-packages/torch";
  m_.torch = t;
  return *this;
}

MachineBuilder& MachineBuilder::driver(const std::string& version, int cuda_version) {
  m_.nvidia.driver_version = version;
  m_.nvidia.cuda_driver_version = cuda_version;
  return *this;
}

MachineBuilder& MachineBuilder::no_nvml(const std::string& code) {
  m_.nvidia = {};
  m_.nvidia.problems.push_back({"nvml", code, "dlopen(libnvidia-ml.so.1): cannot open shared object file",
                                "install the NVIDIA driver, or start the container with --gpus all"});
  m_.gpus.clear();
  m_.pairs.clear();
  nvlinks_.clear();  // keeps with_nvlink() in step with GPUs added afterwards
  return *this;
}

MachineBuilder& MachineBuilder::cuda_only(int multiprocessors) {
  m_.nvidia.nvml_library.reset();
  m_.nvidia.problems = {{"nvml", "nvml_library_not_found",
                         "dlopen(libnvidia-ml.so.1): cannot open shared object file",
                         "NVML is not available on this system; GPUs were sensed through the CUDA driver"}};
  m_.pairs.clear();
  for (auto& g : m_.gpus) {
    Gpu c;
    c.index = g.index;
    c.name = g.name;
    c.uuid = g.uuid;
    c.compute_capability = g.compute_capability;
    c.memory_total_bytes = g.memory_total_bytes;
    c.multiprocessor_count = multiprocessors;
    g = c;
  }
  return *this;
}

Machine MachineBuilder::build() const { return m_; }

namespace machine {
MachineBuilder none() { return MachineBuilder().no_nvml(); }
MachineBuilder gtx1080() { return MachineBuilder().cpus(1, 8).gpus(models::gtx1080()).driver("535.183.01", 12020); }
MachineBuilder v100() { return MachineBuilder().gpus(models::v100()); }
MachineBuilder t4() { return MachineBuilder().cpus(1, 8).gpus(models::t4()); }
MachineBuilder a10() { return MachineBuilder().cpus(1, 16).gpus(models::a10()); }
MachineBuilder a100_nvlink_8() {
  return MachineBuilder().cpus(2, 64).gpus(models::a100_80gb(), 8).with_nvlink().infiniband();
}
MachineBuilder a100_mig() {
  return MachineBuilder().cpus(1, 32).gpus(models::a100_80gb()).with_mig(0, 3, "2g.20gb", 19968 * kMiB);
}
MachineBuilder a100_mig_mixed() {
  return MachineBuilder()
      .cpus(1, 32)
      .gpus(models::a100_80gb(), 2)
      .with_mig(0, 2, "3g.40gb", 40192 * kMiB)
      .with_mig(1, 1, "7g.80gb", 81152 * kMiB);
}
MachineBuilder rtx3090_4090() {
  return MachineBuilder()
      .cpus(1, 16)
      .gpus(models::rtx3090())
      .gpus(models::rtx4090())
      .with_pcie_p2p("not_supported", "hostbridge");
}
MachineBuilder l4() { return MachineBuilder().cpus(1, 16).gpus(models::l4()); }
MachineBuilder h100(int n) { return MachineBuilder().cpus(2, 56).gpus(models::h100(), n); }
MachineBuilder h200(int n) { return MachineBuilder().cpus(2, 48).gpus(models::h200(), n); }
MachineBuilder b200(int n) { return MachineBuilder().cpus(2, 56).gpus(models::b200(), n); }
MachineBuilder rtx5090() { return MachineBuilder().cpus(1, 16).gpus(models::rtx5090()); }
MachineBuilder jetson_orin() {
  return MachineBuilder().cpus(1, 12).gpus(models::jetson_orin()).cuda_only(16).driver("540.4.0", 12060);
}
}  // namespace machine

const std::vector<Fixture>& fixtures() {
  static const std::vector<Fixture> kFixtures = {
      {"none", [] { return machine::none(); }},
      {"gtx1080", [] { return machine::gtx1080(); }},
      {"v100", [] { return machine::v100(); }},
      {"t4", [] { return machine::t4(); }},
      {"a10", [] { return machine::a10(); }},
      {"a100x8-nvlink", [] { return machine::a100_nvlink_8(); }},
      {"a100-mig", [] { return machine::a100_mig(); }},
      {"a100x2-mig-mixed", [] { return machine::a100_mig_mixed(); }},
      {"rtx3090-rtx4090", [] { return machine::rtx3090_4090(); }},
      {"l4", [] { return machine::l4(); }},
      {"h100", [] { return machine::h100(); }},
      {"h200", [] { return machine::h200(); }},
      {"b200x8", [] { return machine::b200(8).with_nvlink().infiniband(); }},
      {"rtx5090", [] { return machine::rtx5090(); }},
      {"jetson-orin", [] { return machine::jetson_orin(); }},
      // Issue 27's two wheel-advice cases (tests/doctor_test.cc, WheelAdvice).
      {"h100-driver550-torch212-cu130",
       [] { return machine::h100().driver("550.54.15", 12040).torch("2.12.0+cu130", "13.0"); }},
      {"v100-driver535-torch212-cu130",
       [] { return machine::v100().driver("535.183.01", 12020).torch("2.12.0+cu130", "13.0"); }},
  };
  return kFixtures;
}

}  // namespace gpuenv::testing

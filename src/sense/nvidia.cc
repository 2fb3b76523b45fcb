// sense_nvidia: NVML first; the CUDA driver when asked (--cuda) or when
// NVML cannot answer (Jetson has no NVML; a broken driver install).
#include <algorithm>
#include <cctype>

#include "sense/cuda.h"
#include "sense/nvml_device.h"
#include "sense/nvml_errors.h"
#include "sense/nvml_library.h"
#include "sense/sense.h"
#include "sense/trace.h"

namespace gpuenv {
namespace {

// False when NVML cannot answer: no library, or init or the count fails.
bool sense_nvml(const std::string& library, Machine* m) {
  Nvml nvml;
  Problem p;
  bool loaded;
  {
    trace::Scope t("dlopen NVML");
    loaded = load_nvml(library, &nvml, &p);
  }
  if (!loaded) {
    m->nvidia.problems.push_back(p);
    return false;
  }
  m->nvidia.nvml_library = library;
  nvml::Return rc;
  {
    trace::Scope t(nvml.fn.init.name);
    rc = nvml.fn.init.call();
  }
  if (rc != nvml::kSuccess) {
    m->nvidia.problems.push_back(nvml_problem(nvml.fn.init.name, rc, nvml_error_text(nvml, rc)));
    return false;
  }
  query_nvml_system(nvml, &m->nvidia);
  std::vector<nvml::Device> handles;
  bool ok = query_nvml_gpus(nvml, &m->gpus, &handles, &m->nvidia.problems);
  m->pairs = query_nvml_pairs(nvml, m->gpus, handles, &m->nvidia.problems);
  trace::Scope t(nvml.fn.shutdown.name);
  nvml.fn.shutdown.call();
  return ok;
}

std::optional<std::string> pci_bus_id(const CudaDevice& d) {
  if (!d.pci_domain || !d.pci_bus || !d.pci_device) return std::nullopt;
  return format_pci_bus_id(static_cast<unsigned>(*d.pci_domain), static_cast<unsigned>(*d.pci_bus),
                           static_cast<unsigned>(*d.pci_device));
}

bool same_text(const std::optional<std::string>& a, const std::optional<std::string>& b) {
  return a && b && std::equal(a->begin(), a->end(), b->begin(), b->end(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The NVML GPU a CUDA device is: same UUID, else same PCI address. CUDA's
// order (FASTEST_FIRST, CUDA_VISIBLE_DEVICES) need not be NVML's.
Gpu* find_gpu(std::vector<Gpu>* gpus, const CudaDevice& d) {
  for (Gpu& g : *gpus)
    if (same_text(g.uuid, d.uuid)) return &g;
  std::optional<std::string> pci = pci_bus_id(d);
  for (Gpu& g : *gpus)
    if (same_text(g.pci_bus_id, pci)) return &g;
  return nullptr;
}

Gpu gpu_from_cuda(const CudaDevice& d) {
  Gpu g;
  g.name = d.name;
  g.uuid = d.uuid;
  g.pci_bus_id = pci_bus_id(d);
  g.compute_capability = d.compute_capability;
  g.memory_total_bytes = d.memory_total_bytes;
  g.multiprocessor_count = d.multiprocessor_count;
  return g;
}

// Without NVML the GPUs are still listed (and indexed) in PCI order, as
// NVML lists them, not in CUDA's FASTEST_FIRST order; a device without a
// PCI address goes last.
std::vector<Gpu> gpus_from_cuda(const std::vector<CudaDevice>& devices) {
  std::vector<Gpu> gpus;
  for (const CudaDevice& d : devices) gpus.push_back(gpu_from_cuda(d));
  std::stable_sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) {
    return a.pci_bus_id.value_or("~") < b.pci_bus_id.value_or("~");
  });
  for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i].index = static_cast<int>(i);
  return gpus;
}

void add_cuda(const CudaReport& cuda, bool nvml_answered, Machine* m) {
  auto& problems = m->nvidia.problems;
  problems.insert(problems.end(), cuda.problems.begin(), cuda.problems.end());
  if (!m->nvidia.cuda_driver_version) m->nvidia.cuda_driver_version = cuda.driver_version;
  if (!nvml_answered) {
    m->gpus = gpus_from_cuda(cuda.devices);
    return;
  }
  for (const CudaDevice& d : cuda.devices)
    if (Gpu* g = find_gpu(&m->gpus, d)) g->multiprocessor_count = d.multiprocessor_count;
}

}  // namespace

void sense_nvidia(const SenseOptions& opts, Machine* m) {
  bool nvml_answered = sense_nvml(opts.nvml_library, m);
  if (nvml_answered && !opts.with_cuda) return;
  add_cuda(sense_cuda(opts.cuda_library), nvml_answered, m);
}

}  // namespace gpuenv

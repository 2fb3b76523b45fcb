// sense_nvidia: NVML first; the CUDA driver when asked (--cuda) or when
// NVML cannot answer (Jetson has no NVML; a broken driver install).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>

#include "sense/cuda/cuda.h"
#include "sense/dcgm/dcgm_profiler.h"
#include "sense/nvml/nvml_device.h"
#include "sense/nvml/nvml_errors.h"
#include "sense/nvml/nvml_library.h"
#include "sense/parallel.h"
#include "sense/sense.h"
#include "sense/trace.h"

namespace gpuenv {
namespace {

// Sensing leaves NVML (and libcuda) initialised for the process's exit to
// release; `gpuenv run` and `serve` exec the user's command after sensing,
// so the NVIDIA device files the drivers opened are closed on exec rather
// than left to the command.
void close_nvidia_files_on_exec() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return;
  for (dirent* e; (e = readdir(dir)) != nullptr;) {
    char* end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd < 0 || fd > INT_MAX || fd == dirfd(dir)) continue;
    char target[64] = {};
    std::string link = std::string("/proc/self/fd/") + e->d_name;
    ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0 || std::string_view(target, n).rfind("/dev/nvidia", 0) != 0) continue;
    int flags = fcntl(static_cast<int>(fd), F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) fcntl(static_cast<int>(fd), F_SETFD, flags | FD_CLOEXEC);
  }
  closedir(dir);
}

// False when NVML cannot answer: no library, or init or the count fails.
//
// No nvmlShutdown (it costs time, docs/performance.md): sensing is one-shot, and the
// process's exit releases NVML. The library stays mapped (load_nvml uses
// RTLD_NODELETE) and its device files are closed on exec. An
// NvmlSession (`check --long`'s watcher, sense/nvml/nvml_session.h) has
// its own nvmlInit/nvmlShutdown pair: NVML counts initialisations, so that
// pair is unaffected.
bool sense_nvml(const SenseOptions& opts, Machine* m) {
  Nvml nvml;
  Problem p;
  bool loaded;
  {
    trace::Scope t("dlopen NVML");
    loaded = load_nvml(opts.nvml_library, &nvml, &p);
  }
  if (!loaded) {
    m->nvidia.problems.push_back(p);
    return false;
  }
  m->nvidia.nvml_library = opts.nvml_library;
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
  NvmlQuery query{opts.root.empty() ? "/" : opts.root, opts.with_health, opts.with_details};
  return query_nvml_devices(nvml, query, &m->gpus, &m->pairs, &m->nvidia.problems);
}

CudaReport traced_sense_cuda(const std::string& library) {
  trace::Scope t("sense CUDA driver");
  return sense_cuda(library);
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
  m->nvidia.cuda_library = cuda.library;
  m->nvidia.cuda_init_result = cuda.init_result;
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

// doctor (with_health) where a GPU predates Hopper: whether libdcgm loads,
// which serves the exporter's profiling fields there (decide/export/profiling.h).
void sense_dcgm(const SenseOptions& opts, Machine* m) {
  bool before_hopper = std::any_of(m->gpus.begin(), m->gpus.end(), [](const Gpu& g) {
    return g.compute_capability && g.compute_capability->major < 9;
  });
  std::string err;
  if (!opts.with_health || !before_hopper) return;
  trace::Scope t("dlopen DCGM");
  if (dcgm_library_loads(opts.dcgm_library, &err)) m->nvidia.dcgm_library = opts.dcgm_library;
}

}  // namespace

// With --cuda, cuInit (slow) runs beside NVML's queries rather than
// after them; as the fallback it runs once NVML has failed.
void sense_nvidia(const SenseOptions& opts, Machine* m) {
  CudaReport cuda;
  bool nvml_answered;
  if (opts.with_cuda) {
    Background cuda_thread([&] { cuda = traced_sense_cuda(opts.cuda_library); });
    nvml_answered = sense_nvml(opts, m);
    cuda_thread.wait();
  } else {
    nvml_answered = sense_nvml(opts, m);
    if (nvml_answered) return sense_dcgm(opts, m), close_nvidia_files_on_exec();
    cuda = traced_sense_cuda(opts.cuda_library);
  }
  add_cuda(cuda, nvml_answered, m);
  sense_dcgm(opts, m);
  close_nvidia_files_on_exec();
}

}  // namespace gpuenv

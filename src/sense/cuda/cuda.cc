#include "sense/cuda/cuda.h"

#include <array>
#include <cstdio>
#include <cstring>

#include "sys/dynamic_library.h"
#include "sense/trace.h"

namespace gpuenv {
namespace {

constexpr std::array kErrors{
    CudaError{cuda::kErrorInvalidValue, "CUDA_ERROR_INVALID_VALUE", "cuda_invalid_value",
              "the CUDA driver rejected an argument", kReportGpuenvBug},
    CudaError{cuda::kErrorOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", "cuda_out_of_memory",
              "the CUDA driver ran out of memory", "free host and GPU memory and try again"},
    CudaError{cuda::kErrorNotInitialized, "CUDA_ERROR_NOT_INITIALIZED", "cuda_not_initialized",
              "the CUDA driver is not initialized: the driver failed to start, or this process "
              "was forked from one that had initialised CUDA",
              "run `nvidia-smi` and look in `dmesg` for NVRM errors; reinstall the driver if "
              "they persist"},
    CudaError{cuda::kErrorDeinitialized, "CUDA_ERROR_DEINITIALIZED", "cuda_deinitialized",
              "the CUDA driver is shutting down", "try again"},
    CudaError{cuda::kErrorStubLibrary, "CUDA_ERROR_STUB_LIBRARY", "cuda_stub_library",
              "the libcuda loaded is the CUDA toolkit's stub (lib64/stubs), not the driver's",
              "remove the toolkit's stubs directory from LD_LIBRARY_PATH and ld.so.conf: the "
              "real libcuda.so.1 comes with the NVIDIA driver; in a container, start it with "
              "`--gpus all` (NVIDIA Container Toolkit)"},
    CudaError{cuda::kErrorInsufficientDriver, "CUDA_ERROR_INSUFFICIENT_DRIVER",
              "cuda_insufficient_driver",
              "the installed NVIDIA driver is older than this CUDA library needs",
              "upgrade the NVIDIA driver, or use a CUDA (PyTorch) build no newer than the CUDA "
              "version the driver supports (`nvidia-smi` shows it)"},
    CudaError{cuda::kErrorDeviceUnavailable, "CUDA_ERROR_DEVICE_UNAVAILABLE",
              "cuda_device_unavailable",
              "the GPUs are busy or unavailable (compute mode exclusive-process or prohibited)",
              "`nvidia-smi -q -d COMPUTE` shows the compute mode; `sudo nvidia-smi -c DEFAULT` "
              "resets it"},
    CudaError{cuda::kErrorNoDevice, "CUDA_ERROR_NO_DEVICE", "cuda_no_device",
              "no CUDA-capable device is detected",
              "check `nvidia-smi`; CUDA_VISIBLE_DEVICES may hide every GPU (empty or invalid); "
              "in a container, start it with `--gpus all` (NVIDIA Container Toolkit)"},
    CudaError{cuda::kErrorInvalidDevice, "CUDA_ERROR_INVALID_DEVICE", "cuda_invalid_device",
              "the device ordinal is not valid",
              "check CUDA_VISIBLE_DEVICES against `nvidia-smi -L`"},
    CudaError{cuda::kErrorDeviceNotLicensed, "CUDA_ERROR_DEVICE_NOT_LICENSED",
              "cuda_device_not_licensed", "the GPU needs a license (vGPU) to run CUDA",
              "check the vGPU license (`nvidia-smi -q | grep -i license`) and its license "
              "server"},
    CudaError{cuda::kErrorOperatingSystem, "CUDA_ERROR_OPERATING_SYSTEM", "cuda_operating_system",
              "an operating system call made by the CUDA driver failed",
              "look in `dmesg`; check the permissions of /dev/nvidia* and security policies"},
    CudaError{cuda::kErrorNotPermitted, "CUDA_ERROR_NOT_PERMITTED", "cuda_not_permitted",
              "the CUDA driver does not permit the operation",
              "check the permissions of /dev/nvidia* and the GPU's compute mode"},
    CudaError{cuda::kErrorNotSupported, "CUDA_ERROR_NOT_SUPPORTED", "cuda_not_supported",
              "the CUDA driver does not support the operation on this system",
              "nothing to do: the value is reported as unknown"},
    CudaError{cuda::kErrorSystemNotReady, "CUDA_ERROR_SYSTEM_NOT_READY", "cuda_system_not_ready",
              "the system is not yet initialized: on an NVSwitch machine (HGX, DGX) the NVIDIA "
              "Fabric Manager has not set up the NVLink fabric",
              "start it: `sudo systemctl enable --now nvidia-fabricmanager` (its version must "
              "match the driver's exactly); `nvidia-smi -q | grep -A 2 Fabric` shows the fabric "
              "state"},
    CudaError{cuda::kErrorSystemDriverMismatch, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
              "cuda_driver_mismatch",
              "the system has an unsupported display driver / CUDA driver combination: "
              "libcuda.so.1 and the nvidia kernel module are from different driver versions",
              "make libcuda.so.1 come from the same driver as the kernel module: a CUDA "
              "forward-compatibility package (cuda-compat) in LD_LIBRARY_PATH or a leftover "
              "libcuda is the usual cause; after a driver upgrade, reboot; compare `cat "
              "/proc/driver/nvidia/version` with the libcuda version"},
    CudaError{cuda::kErrorCompatNotSupportedOnDevice, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
              "cuda_compat_not_supported",
              "CUDA forward compatibility was attempted on hardware that does not support it "
              "(it works on data-center GPUs only)",
              "remove the cuda-compat libcuda from LD_LIBRARY_PATH and ld.so.conf, and upgrade "
              "the NVIDIA driver instead"},
    CudaError{cuda::kErrorUnknown, "CUDA_ERROR_UNKNOWN", "cuda_unknown",
              "the CUDA driver failed with an unknown error",
              "look in `dmesg` for Xid or NVRM errors; reboot, or reinstall the driver"},
};

/// The CUDA driver functions gpuenv calls; init, version, count and get
/// are required.
struct CudaFunctions {
  Fn<cuda::InitFn> init;
  Fn<cuda::DriverGetVersionFn> driver_version;
  Fn<cuda::DeviceGetCountFn> count;
  Fn<cuda::DeviceGetFn> get;
  Fn<cuda::DeviceGetNameFn> name;
  Fn<cuda::DeviceGetAttributeFn> attribute;
  Fn<cuda::DeviceTotalMemFn> total_mem;
  Fn<cuda::DeviceGetUuidFn> uuid;
  Fn<cuda::GetErrorStringFn> error_string;
};

struct Cuda {
  DynamicLibrary library;
  CudaFunctions fn;
};

std::vector<Symbol> symbol_table(CudaFunctions* f) {
  return {
      {{"cuInit"}, &f->init, true},
      {{"cuDriverGetVersion"}, &f->driver_version, true},
      {{"cuDeviceGetCount"}, &f->count, true},
      {{"cuDeviceGet"}, &f->get, true},
      {{"cuDeviceGetName"}, &f->name, false},
      {{"cuDeviceGetAttribute"}, &f->attribute, false},
      {{"cuDeviceTotalMem_v2"}, &f->total_mem, false},
      {{"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}, &f->uuid, false},
      {{"cuGetErrorString"}, &f->error_string, false},
  };
}

Problem library_not_found(const std::string& library, const std::string& text) {
  return {"cuda", "cuda_library_not_found",
          "cannot load the CUDA driver (" + library + "): " + text,
          "install the NVIDIA driver (libcuda.so.1 comes with it, not with the CUDA toolkit; "
          "on Jetson, with JetPack); in a container, start it with `--gpus all` through the "
          "NVIDIA Container Toolkit; if the library is elsewhere, point GPUENV_CUDA_LIBRARY at it"};
}

Problem symbol_missing(const std::string& library, const std::string& names) {
  return {"cuda", "cuda_symbol_missing",
          library + " is not a usable CUDA driver: it exports no " + names,
          "upgrade the NVIDIA driver; if GPUENV_CUDA_LIBRARY is set, point it at the driver's "
          "libcuda.so.1"};
}

bool load_cuda(const std::string& library, Cuda* cuda, Problem* err) {
  std::string text;
  if (!cuda->library.open(library, &text, /*keep_loaded=*/true)) {
    *err = library_not_found(library, text);
    return false;
  }
  if (!cuda->library.resolve(symbol_table(&cuda->fn), &text)) {
    *err = symbol_missing(library, text);
    return false;
  }
  return true;
}

/// Runs CUDA calls about one subject; failures become Problems, except,
/// when quiet, "not supported / no such attribute" (the value stays unknown).
class CudaCaller {
 public:
  CudaCaller(const Cuda& cuda, std::string subject, std::vector<Problem>* problems, bool quiet)
      : cuda_(cuda), subject_(std::move(subject)), problems_(problems), quiet_(quiet) {}

  template <typename F, typename... Args>
  bool operator()(const Fn<F>& fn, Args... args) {
    if (fn.call == nullptr) return false;
    trace::Scope t(fn.name);
    last_ = fn.call(args...);
    return last_ == cuda::kSuccess || report(fn.name, last_);
  }

  /// The last call's result.
  cuda::Result last() const { return last_; }

 private:
  bool report(const char* fn, cuda::Result rc) {
    if (quiet_ && (rc == cuda::kErrorInvalidValue || rc == cuda::kErrorNotSupported)) return false;
    const char* text = nullptr;
    if (cuda_.fn.error_string.call != nullptr) cuda_.fn.error_string.call(rc, &text);
    std::string call = subject_.empty() ? fn : std::string(fn) + "(" + subject_ + ")";
    problems_->push_back(cuda_problem(call, rc, text));
    return false;
  }

  const Cuda& cuda_;
  std::string subject_;
  std::vector<Problem>* problems_;
  bool quiet_;
  cuda::Result last_ = cuda::kSuccess;
};

std::optional<int> attribute(CudaCaller& call, const Cuda& cuda, cuda::Device dev, int attr) {
  int value = 0;
  if (!call(cuda.fn.attribute, &value, attr, dev)) return std::nullopt;
  return value;
}

void query_pci(CudaCaller& call, const Cuda& cuda, cuda::Device dev, CudaDevice* d) {
  d->pci_domain = attribute(call, cuda, dev, cuda::kAttrPciDomainId);
  d->pci_bus = attribute(call, cuda, dev, cuda::kAttrPciBusId);
  d->pci_device = attribute(call, cuda, dev, cuda::kAttrPciDeviceId);
}

std::optional<ComputeCapability> compute_capability(CudaCaller& call, const Cuda& cuda,
                                                    cuda::Device dev) {
  std::optional<int> major = attribute(call, cuda, dev, cuda::kAttrComputeCapabilityMajor);
  std::optional<int> minor = attribute(call, cuda, dev, cuda::kAttrComputeCapabilityMinor);
  if (!major || !minor) return std::nullopt;
  return ComputeCapability{*major, *minor};
}

void query_identity(CudaCaller& call, const Cuda& cuda, cuda::Device dev, CudaDevice* d) {
  char name[256] = {};
  if (call(cuda.fn.name, name, static_cast<int>(sizeof name), dev))
    d->name = std::string(name, strnlen(name, sizeof name));
  cuda::Uuid uuid{};
  if (call(cuda.fn.uuid, &uuid, dev)) d->uuid = format_cuda_uuid(uuid);
  std::size_t bytes = 0;
  if (call(cuda.fn.total_mem, &bytes, dev)) d->memory_total_bytes = bytes;
}

CudaDevice query_device(const Cuda& cuda, int ordinal, std::vector<Problem>* problems) {
  CudaDevice d;
  d.ordinal = ordinal;
  CudaCaller call(cuda, "device " + std::to_string(ordinal), problems, true);
  cuda::Device dev = 0;
  if (!call(cuda.fn.get, &dev, ordinal)) return d;
  query_identity(call, cuda, dev, &d);
  d.compute_capability = compute_capability(call, cuda, dev);
  d.multiprocessor_count = attribute(call, cuda, dev, cuda::kAttrMultiprocessorCount);
  query_pci(call, cuda, dev, &d);
  return d;
}

}  // namespace

CudaReport sense_cuda(const std::string& library) {
  CudaReport r;
  Cuda cuda;
  Problem p;
  bool loaded;
  {
    trace::Scope t("dlopen CUDA driver");
    loaded = load_cuda(library, &cuda, &p);
  }
  if (!loaded) {
    r.problems.push_back(p);
    return r;
  }
  r.library = library;
  // The version needs no cuInit; its failure is left to cuInit to report.
  int version = 0, count = 0;
  if (cuda.fn.driver_version.call(&version) == cuda::kSuccess) r.driver_version = version;
  CudaCaller call(cuda, "", &r.problems, false);
  bool initialised = call(cuda.fn.init, 0u);
  r.init_result = call.last();
  if (!initialised || !call(cuda.fn.count, &count)) return r;
  for (int i = 0; i < count; ++i) r.devices.push_back(query_device(cuda, i, &r.problems));
  return r;
}

std::span<const CudaError> cuda_errors() { return kErrors; }

Problem cuda_problem(const std::string& call, cuda::Result rc, const char* library_text) {
  static constexpr UnlistedError kUnlisted{"cuda", "cuda_error", "CUDA error", "unrecognised CUDA error",
                                           "look in `dmesg`; upgrading the driver may help"};
  return library_error_problem(kErrors, kUnlisted, call, rc, library_text);
}

std::string format_cuda_uuid(const cuda::Uuid& uuid) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) out += '-';
  }
  return out;
}

}  // namespace gpuenv

#include "sense/nvml/nvml_errors.h"

#include <array>

namespace gpuenv {
namespace {

constexpr std::array kErrors{
    NvmlError{nvml::kErrorUninitialized, "NVML_ERROR_UNINITIALIZED", "nvml_uninitialized",
              "NVML was used before nvmlInit", kReportGpuenvBug},
    NvmlError{nvml::kErrorInvalidArgument, "NVML_ERROR_INVALID_ARGUMENT", "nvml_invalid_argument",
              "NVML rejected an argument", kReportGpuenvBug},
    NvmlError{nvml::kErrorNotSupported, "NVML_ERROR_NOT_SUPPORTED", "nvml_not_supported",
              "the GPU or driver does not support this query",
              "nothing to do: the value is reported as unknown"},
    NvmlError{nvml::kErrorNoPermission, "NVML_ERROR_NO_PERMISSION", "nvml_no_permission",
              "no permission to use the NVIDIA device files (/dev/nvidiactl, /dev/nvidia*)",
              "give this user read/write access to /dev/nvidia* (see `ls -l /dev/nvidia*`; some "
              "systems use a `video` group); in a container, start it with `--gpus all` (NVIDIA "
              "Container Toolkit) so that its device cgroup allows the GPUs"},
    NvmlError{nvml::kErrorNotFound, "NVML_ERROR_NOT_FOUND", "nvml_not_found",
              "the object asked for does not exist",
              "nothing to do: the value is reported as unknown"},
    NvmlError{nvml::kErrorInsufficientSize, "NVML_ERROR_INSUFFICIENT_SIZE",
              "nvml_insufficient_size", "a buffer passed to NVML was too small", kReportGpuenvBug},
    NvmlError{nvml::kErrorInsufficientPower, "NVML_ERROR_INSUFFICIENT_POWER",
              "nvml_insufficient_power", "a GPU's external power cables are not properly attached",
              "power the machine off, connect every auxiliary power connector of the GPU, and "
              "check that the power supply can feed it"},
    NvmlError{nvml::kErrorDriverNotLoaded, "NVML_ERROR_DRIVER_NOT_LOADED", "nvml_driver_not_loaded",
              "the nvidia kernel module is not loaded",
              "load it with `sudo modprobe nvidia`, or reinstall the driver; `dmesg | grep -i "
              "nvidia` says why it failed (Secure Boot rejects an unsigned module; after a kernel "
              "update the module must be rebuilt, e.g. by DKMS)"},
    NvmlError{nvml::kErrorTimeout, "NVML_ERROR_TIMEOUT", "nvml_timeout",
              "the driver did not answer in time",
              "try again; if it persists, look for Xid errors in `dmesg` and reboot"},
    NvmlError{nvml::kErrorIrqIssue, "NVML_ERROR_IRQ_ISSUE", "nvml_irq_issue",
              "the nvidia kernel module detected an interrupt problem with a GPU",
              "look for NVRM messages in `dmesg`; update the system BIOS and the driver; try "
              "the GPU in another slot"},
    NvmlError{nvml::kErrorLibraryNotFound, "NVML_ERROR_LIBRARY_NOT_FOUND",
              "nvml_dependency_not_found", "NVML could not find a library it depends on",
              "reinstall the NVIDIA driver: its user-space libraries are incomplete"},
    NvmlError{nvml::kErrorFunctionNotFound, "NVML_ERROR_FUNCTION_NOT_FOUND",
              "nvml_function_not_found", "the driver does not implement this function",
              "upgrade the NVIDIA driver"},
    NvmlError{nvml::kErrorCorruptedInforom, "NVML_ERROR_CORRUPTED_INFOROM",
              "nvml_corrupted_inforom", "a GPU's infoROM is corrupted",
              "the GPU may still work; contact its vendor (`nvidia-smi -q` shows the infoROM "
              "versions)"},
    NvmlError{nvml::kErrorGpuIsLost, "NVML_ERROR_GPU_IS_LOST", "nvml_gpu_lost",
              "the GPU has fallen off the bus or is otherwise inaccessible",
              "look for Xid 79 in `dmesg`; reset the GPU with `nvidia-smi -r -i <index>` or "
              "reboot; if it happens again, check its power, cooling and PCIe slot"},
    NvmlError{nvml::kErrorResetRequired, "NVML_ERROR_RESET_REQUIRED", "nvml_reset_required",
              "the GPU needs a reset before it can be used again",
              "stop the processes using it, then `sudo nvidia-smi -r -i <index>`, or reboot"},
    NvmlError{nvml::kErrorOperatingSystem, "NVML_ERROR_OPERATING_SYSTEM", "nvml_operating_system",
              "the operating system blocked the call",
              "look in `dmesg`; check security policies (SELinux, AppArmor, a container's "
              "seccomp profile)"},
    NvmlError{nvml::kErrorLibRmVersionMismatch, "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
              "nvml_version_mismatch",
              "Driver/library version mismatch: the driver was upgraded but the old kernel "
              "module is still loaded",
              "reboot, or reload the nvidia kernel modules (stop everything using the GPUs, then "
              "`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe "
              "nvidia`); `cat /proc/driver/nvidia/version` shows the loaded module's version"},
    NvmlError{nvml::kErrorInUse, "NVML_ERROR_IN_USE", "nvml_in_use",
              "the GPU is in use by another process", "try again when it is free"},
    NvmlError{nvml::kErrorMemory, "NVML_ERROR_MEMORY", "nvml_out_of_memory",
              "NVML ran out of host memory", "free host memory and try again"},
    NvmlError{nvml::kErrorNoData, "NVML_ERROR_NO_DATA", "nvml_no_data",
              "the driver has no data for this query",
              "nothing to do: the value is reported as unknown"},
    NvmlError{nvml::kErrorInsufficientResources, "NVML_ERROR_INSUFFICIENT_RESOURCES",
              "nvml_insufficient_resources", "the driver ran out of a resource it needs",
              "free GPU resources (other processes, MIG instances) and try again"},
    NvmlError{nvml::kErrorArgumentVersionMismatch, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
              "nvml_argument_version_mismatch",
              "the driver rejected the version word of a versioned NVML struct", kReportGpuenvBug},
    NvmlError{nvml::kErrorGpuNotFound, "NVML_ERROR_GPU_NOT_FOUND", "nvml_gpu_not_found",
              "the GPU is gone (removed, or hidden from this container)",
              "check `nvidia-smi -L`; a container sees only the GPUs it was started with"},
    NvmlError{nvml::kErrorUnknown, "NVML_ERROR_UNKNOWN", "nvml_unknown",
              "NVML failed with an unknown internal error",
              "check `nvidia-smi` and `dmesg`; reinstalling the driver or rebooting usually "
              "clears it"},
};

}  // namespace

std::span<const NvmlError> nvml_errors() { return kErrors; }

const NvmlError* find_nvml_error(nvml::Return rc) { return find_library_error(kErrors, rc); }

Problem nvml_problem(const std::string& call, nvml::Return rc, const char* library_text) {
  static constexpr UnlistedError kUnlisted{"nvml", "nvml_error", "NVML error", "unrecognised NVML error",
                                           "check `nvidia-smi` and `dmesg`; upgrading the driver may help"};
  return library_error_problem(kErrors, kUnlisted, call, rc, library_text);
}

Problem nvml_library_not_found(const std::string& library, const std::string& dlerror_text) {
  return {"nvml", "nvml_library_not_found", "cannot load NVML (" + library + "): " + dlerror_text,
          "install the NVIDIA driver (it ships libnvidia-ml.so.1); in a container, start it "
          "with `--gpus all` through the NVIDIA Container Toolkit; if the library is "
          "elsewhere, point GPUENV_NVML_LIBRARY at it"};
}

Problem nvml_symbol_missing(const std::string& library, const std::string& names) {
  return {"nvml", "nvml_symbol_missing", library + " is not a usable NVML: it exports no " + names,
          "upgrade the NVIDIA driver; if GPUENV_NVML_LIBRARY is set, point it at the "
          "driver's libnvidia-ml.so.1"};
}

bool nvml_error_means_absent(nvml::Return rc) {
  return rc == nvml::kErrorNotSupported || rc == nvml::kErrorNotFound ||
         rc == nvml::kErrorFunctionNotFound || rc == nvml::kErrorNoData ||
         rc == nvml::kErrorInvalidArgument;
}

bool nvml_error_is_fatal_for_gpu(nvml::Return rc) {
  return rc == nvml::kErrorGpuIsLost || rc == nvml::kErrorResetRequired ||
         rc == nvml::kErrorGpuNotFound;
}

}  // namespace gpuenv

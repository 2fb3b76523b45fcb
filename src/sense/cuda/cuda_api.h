// The subset of the CUDA driver API that gpuenv uses, declared here and
// nowhere else. Matches cuda.h of CUDA 12.x/13.0. Only sense/cuda.{h,cc}
// includes this; libcuda.so.1 is dlopened at run time (see cuda.h).
#pragma once

#include <cstddef>

namespace gpuenv::cuda {

using Result = int;  // CUresult
using Device = int;  // CUdevice: an ordinal

// CUresult values gpuenv names.
enum : Result {
  kSuccess = 0,
  kErrorInvalidValue = 1,
  kErrorOutOfMemory = 2,
  kErrorNotInitialized = 3,
  kErrorDeinitialized = 4,
  kErrorStubLibrary = 34,
  kErrorInsufficientDriver = 35,
  kErrorDeviceUnavailable = 46,
  kErrorNoDevice = 100,
  kErrorInvalidDevice = 101,
  kErrorDeviceNotLicensed = 102,
  kErrorOperatingSystem = 304,
  kErrorNotPermitted = 800,
  kErrorNotSupported = 801,
  kErrorSystemNotReady = 802,
  kErrorSystemDriverMismatch = 803,
  kErrorCompatNotSupportedOnDevice = 804,
  kErrorUnknown = 999,
};

// CUdevice_attribute values gpuenv reads.
enum : int {
  kAttrMultiprocessorCount = 16,
  kAttrPciBusId = 33,
  kAttrPciDeviceId = 34,
  kAttrPciDomainId = 50,
  kAttrComputeCapabilityMajor = 75,
  kAttrComputeCapabilityMinor = 76,
};

// CUuuid
struct Uuid {
  char bytes[16];
};
static_assert(sizeof(Uuid) == 16);

// Function pointer types, named after the CUDA function they hold.
using InitFn = Result (*)(unsigned int);
using DriverGetVersionFn = Result (*)(int*);
using DeviceGetCountFn = Result (*)(int*);
using DeviceGetFn = Result (*)(Device*, int);
using DeviceGetNameFn = Result (*)(char*, int, Device);
using DeviceGetAttributeFn = Result (*)(int*, int, Device);
using DeviceTotalMemFn = Result (*)(std::size_t*, Device);  // cuDeviceTotalMem_v2
using DeviceGetUuidFn = Result (*)(Uuid*, Device);
using GetErrorStringFn = Result (*)(Result, const char**);

}  // namespace gpuenv::cuda

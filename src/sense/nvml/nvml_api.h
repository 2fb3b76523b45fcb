// The subset of NVML that gpuenv uses, declared here and nowhere else.
// Matches nvml.h of CUDA 12.x/13.0 (NVML API version 12, driver 525-580).
// Only sense/nvml_*.cc include this; nothing links against NVML: the library
// is dlopened at run time (see nvml_library.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuenv::nvml {

using Device = struct OpaqueDevice*;  // nvmlDevice_t
using Return = int;                   // nvmlReturn_t

// nvmlReturn_t values.
enum : Return {
  kSuccess = 0,
  kErrorUninitialized = 1,
  kErrorInvalidArgument = 2,
  kErrorNotSupported = 3,
  kErrorNoPermission = 4,
  kErrorAlreadyInitialized = 5,
  kErrorNotFound = 6,
  kErrorInsufficientSize = 7,
  kErrorInsufficientPower = 8,
  kErrorDriverNotLoaded = 9,
  kErrorTimeout = 10,
  kErrorIrqIssue = 11,
  kErrorLibraryNotFound = 12,
  kErrorFunctionNotFound = 13,
  kErrorCorruptedInforom = 14,
  kErrorGpuIsLost = 15,
  kErrorResetRequired = 16,
  kErrorOperatingSystem = 17,
  kErrorLibRmVersionMismatch = 18,
  kErrorInUse = 19,
  kErrorMemory = 20,
  kErrorNoData = 21,
  kErrorVgpuEccNotEnabled = 22,
  kErrorInsufficientResources = 23,
  kErrorFreqNotSupported = 24,
  kErrorArgumentVersionMismatch = 25,
  kErrorDeprecated = 26,
  kErrorNotReady = 27,
  kErrorGpuNotFound = 28,
  kErrorInvalidState = 29,
  kErrorUnknown = 999,
};

inline constexpr unsigned kDeviceNameBufferSize = 96;   // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kUuidBufferSize = 96;         // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
inline constexpr unsigned kNvlinkMaxLinks = 18;         // NVML_NVLINK_MAX_LINKS

// nvmlPciInfo_t (used by nvmlDeviceGetPciInfo_v3 and _v2).
struct PciInfo {
  char bus_id_legacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_sub_system_id;
  char bus_id[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
};
static_assert(sizeof(PciInfo) == 68);
static_assert(offsetof(PciInfo, bus_id) == 36);

// The nvmlPciInfo_t of NVML before the _v2 functions (what the unversioned
// nvmlDeviceGetPciInfo fills): a 16-byte "0000:3B:00.0" bus id, no 32-byte one.
struct PciInfoV1 {
  char bus_id[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_sub_system_id;
  unsigned int reserved[4];
};
static_assert(sizeof(PciInfoV1) == 52);

// nvmlMemory_t (nvmlDeviceGetMemoryInfo).
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(Memory) == 24);

// nvmlMemory_v2_t (nvmlDeviceGetMemoryInfo_v2); version = nvmlMemory_v2.
struct MemoryV2 {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(MemoryV2) == 40);
static_assert(offsetof(MemoryV2, total) == 8);

/// NVML_STRUCT_VERSION(Memory, 2): the struct size in the low 24 bits and
/// the version number in the top byte.
inline constexpr unsigned int kMemoryV2Version =
    static_cast<unsigned int>(sizeof(MemoryV2)) | (2u << 24);
static_assert(kMemoryV2Version == 0x02000028);

// nvmlDeviceAttributes_t (nvmlDeviceGetAttributes_v2; NVML R470 and later): a
// MIG device's share of its GPU.
struct DeviceAttributes {
  unsigned int multiprocessor_count;
  unsigned int shared_copy_engine_count;
  unsigned int shared_decoder_count;
  unsigned int shared_encoder_count;
  unsigned int shared_jpeg_count;
  unsigned int shared_ofa_count;
  unsigned int gpu_instance_slice_count;
  unsigned int compute_instance_slice_count;
  unsigned long long memory_size_mb;
};
static_assert(sizeof(DeviceAttributes) == 40);
static_assert(offsetof(DeviceAttributes, memory_size_mb) == 32);

// nvmlEnableState_t
enum : int { kFeatureDisabled = 0, kFeatureEnabled = 1 };

// NVML_DEVICE_MIG_DISABLE / NVML_DEVICE_MIG_ENABLE (nvmlDeviceGetMigMode)
enum : unsigned int { kDeviceMigDisable = 0, kDeviceMigEnable = 1 };

// nvmlComputeMode_t
enum : int {
  kComputeModeDefault = 0,
  kComputeModeExclusiveThread = 1,
  kComputeModeProhibited = 2,
  kComputeModeExclusiveProcess = 3,
};

// nvmlClockType_t
enum : int { kClockGraphics = 0, kClockSm = 1, kClockMem = 2, kClockVideo = 3 };

// nvmlGpuTopologyLevel_t
enum : int {
  kTopologyInternal = 0,
  kTopologySingle = 10,
  kTopologyMultiple = 20,
  kTopologyHostbridge = 30,
  kTopologyNode = 40,
  kTopologySystem = 50,
};

// nvmlGpuP2PCapsIndex_t
enum : int { kP2pCapsRead = 0, kP2pCapsWrite = 1, kP2pCapsNvlink = 2, kP2pCapsAtomics = 3 };

// nvmlGpuP2PStatus_t
enum : int {
  kP2pStatusOk = 0,
  kP2pStatusChipsetNotSupported = 1,
  kP2pStatusGpuNotSupported = 2,
  kP2pStatusIohTopologyNotSupported = 3,
  kP2pStatusDisabledByRegkey = 4,
  kP2pStatusNotSupported = 5,
  kP2pStatusUnknown = 6,
};

// Function pointer types, named after the NVML function they hold.
using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using SystemGetDriverVersionFn = Return (*)(char*, unsigned int);
using SystemGetCudaDriverVersionFn = Return (*)(int*);
using DeviceGetCountFn = Return (*)(unsigned int*);
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);
using DeviceGetStringFn = Return (*)(Device, char*, unsigned int);  // Name, UUID
using DeviceGetPciInfoFn = Return (*)(Device, PciInfo*);      // _v3, _v2
using DeviceGetPciInfoV1Fn = Return (*)(Device, PciInfoV1*);  // unversioned
using DeviceGetCudaComputeCapabilityFn = Return (*)(Device, int*, int*);
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);
using DeviceGetMemoryInfoV2Fn = Return (*)(Device, MemoryV2*);
using DeviceGetMigModeFn = Return (*)(Device, unsigned int*, unsigned int*);
using DeviceGetMaxMigDeviceCountFn = Return (*)(Device, unsigned int*);
using DeviceGetMigDeviceHandleByIndexFn = Return (*)(Device, unsigned int, Device*);
using DeviceGetAttributesFn = Return (*)(Device, DeviceAttributes*);
using DeviceGetUintFn = Return (*)(Device, unsigned int*);  // many getters share this
using DeviceGetEnableStateFn = Return (*)(Device, int*);     // nvmlEnableState_t*
using DeviceGetComputeModeFn = Return (*)(Device, int*);
using DeviceGetMaxClockInfoFn = Return (*)(Device, int, unsigned int*);
using DeviceGetNvLinkStateFn = Return (*)(Device, unsigned int, int*);
using DeviceGetCpuAffinityFn = Return (*)(Device, unsigned int, unsigned long*);
using DeviceGetNumaNodeIdFn = Return (*)(Device, unsigned int*);
using DeviceGetTopologyCommonAncestorFn = Return (*)(Device, Device, int*);
using DeviceGetP2PStatusFn = Return (*)(Device, Device, int, int*);

// ---- A GPU's live state (sense/nvml/nvml_reading.cc): health, and what
// `gpuenv check --long` watches ----

// nvmlTemperatureSensors_t
enum : int { kTemperatureGpu = 0 };
// nvmlMemoryErrorType_t, nvmlEccCounterType_t
enum : int { kMemoryErrorCorrected = 0, kMemoryErrorUncorrected = 1 };
enum : int { kVolatileEcc = 0, kAggregateEcc = 1 };
// nvmlClocksEventReasons (formerly nvmlClocksThrottleReasons): the bits of
// the unsigned long long mask are declared once, in model/hardware/clock_events.h.
static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));

using DeviceGetHandleByUuidFn = Return (*)(const char*, Device*);
using DeviceGetClockInfoFn = Return (*)(Device, int, unsigned int*);    // nvmlClockType_t
using DeviceGetTemperatureFn = Return (*)(Device, int, unsigned int*);  // nvmlTemperatureSensors_t
using DeviceGetPowerUsageFn = Return (*)(Device, unsigned int*);        // milliwatts
using DeviceGetClocksEventReasonsFn = Return (*)(Device, unsigned long long*);
using DeviceGetTotalEccErrorsFn = Return (*)(Device, int, int, unsigned long long*);
// corrected rows, uncorrected rows, remapping pending, remapping failed
using DeviceGetRemappedRowsFn = Return (*)(Device, unsigned int*, unsigned int*, unsigned int*, unsigned int*);

// ---- Health, read for doctor (SenseOptions::with_health; nvml_device.cc) ----
// Also uses DeviceGetClocksEventReasonsFn (nvmlDeviceGetCurrentClocksEventReasons,
// CUDA 12.2+ / R535; before it nvmlDeviceGetCurrentClocksThrottleReasons, same
// signature), DeviceGetTemperatureFn, DeviceGetTotalEccErrorsFn and
// DeviceGetRemappedRowsFn (R460+) above.

// nvmlDeviceGetEccMode(device, nvmlEnableState_t* current, nvmlEnableState_t* pending)
using DeviceGetEccModeFn = Return (*)(Device, int*, int*);
// nvmlDeviceGetRetiredPagesPendingStatus(device, nvmlEnableState_t* isPending)
using DeviceGetRetiredPagesPendingStatusFn = Return (*)(Device, int*);

// nvmlGpuFabricState_t (an unsigned char): NVML_GPU_FABRIC_STATE_*.
enum : unsigned char {
  kFabricStateNotSupported = 0,
  kFabricStateNotStarted = 1,
  kFabricStateInProgress = 2,
  kFabricStateCompleted = 3,
};

// nvmlGpuFabricInfo_t (nvmlDeviceGetGpuFabricInfo, CUDA 12.0+ / R525; its
// third field was named partitionId before CUDA 12.3). Not the versioned
// nvmlGpuFabricInfoV_t of nvmlDeviceGetGpuFabricInfoV.
struct GpuFabricInfo {
  unsigned char cluster_uuid[16];  // NVML_GPU_FABRIC_UUID_LEN
  Return status;                   // meaningful once state is completed
  unsigned int clique_id;
  unsigned char state;  // nvmlGpuFabricState_t
};
static_assert(sizeof(GpuFabricInfo) == 28);
static_assert(offsetof(GpuFabricInfo, status) == 16);
static_assert(offsetof(GpuFabricInfo, state) == 24);

using DeviceGetGpuFabricInfoFn = Return (*)(Device, GpuFabricInfo*);

// ---- A GPU's live state (sense/nvml/nvml_reading.cc), sampled by `gpuenv
// export`, and the job watcher's extras (sense/nvml/job_watch.cc) ----
// Also uses DeviceGetClockInfoFn, DeviceGetPowerUsageFn,
// DeviceGetClocksEventReasonsFn and the health functions above.

// nvmlUtilization_t (nvmlDeviceGetUtilizationRates): percent of the last
// sample period in which a kernel ran / device memory was read or written.
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
static_assert(sizeof(Utilization) == 8);

using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);
// nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver loaded (Volta+).
using DeviceGetTotalEnergyConsumptionFn = Return (*)(Device, unsigned long long*);
// nvmlDeviceGetPcieReplayCounter is a DeviceGetUintFn.

// nvmlProcessInfo_t, the struct of nvmlDeviceGetComputeRunningProcesses_v3
// (and of _v2, as nvmlProcessInfo_v2_t: the same layout). Not the 16-byte
// nvmlProcessInfo_v1_t of the unversioned function, which gpuenv does not use.
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;  // bytes; NVML_VALUE_NOT_AVAILABLE when unknown
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
static_assert(sizeof(ProcessInfo) == 24);
static_assert(offsetof(ProcessInfo, used_gpu_memory) == 8);
static_assert(offsetof(ProcessInfo, gpu_instance_id) == 16);
inline constexpr unsigned long long kValueNotAvailable = ~0ull;  // NVML_VALUE_NOT_AVAILABLE

// nvmlPcieUtilCounter_t
enum : int { kPcieUtilTxBytes = 0, kPcieUtilRxBytes = 1 };

// (device, in: capacity of infos / out: processes, infos); NVML_ERROR_INSUFFICIENT_SIZE when too small.
// nvmlDeviceGetComputeRunningProcesses_v3 (R510+; _v2 R470) and
// nvmlDeviceGetGraphicsRunningProcesses_v3 (_v2) share it.
using DeviceGetComputeRunningProcessesFn = Return (*)(Device, unsigned int*, ProcessInfo*);
using DeviceGetGraphicsRunningProcessesFn = DeviceGetComputeRunningProcessesFn;

// nvmlProcessUtilizationSample_t (nvmlDeviceGetProcessUtilization, Maxwell
// and newer; unchanged from NVML 8 to CUDA 13): one process's use of the GPU
// over a sample period, in percent; timeStamp is CPU microseconds.
struct ProcessUtilizationSample {
  unsigned int pid;
  unsigned long long time_stamp;
  unsigned int sm_util;
  unsigned int mem_util;
  unsigned int enc_util;
  unsigned int dec_util;
};
static_assert(sizeof(ProcessUtilizationSample) == 32);
static_assert(offsetof(ProcessUtilizationSample, time_stamp) == 8);
static_assert(offsetof(ProcessUtilizationSample, sm_util) == 16);
static_assert(offsetof(ProcessUtilizationSample, dec_util) == 28);

// nvmlDeviceGetProcessUtilization(device, samples, in: capacity / out:
// samples written, lastSeenTimeStamp): only samples newer than
// lastSeenTimeStamp (0: all the driver holds); samples NULL asks the size
// (NVML_ERROR_INSUFFICIENT_SIZE); NVML_ERROR_NOT_FOUND when there are none.
using DeviceGetProcessUtilizationFn = Return (*)(Device, ProcessUtilizationSample*, unsigned int*, unsigned long long);
using DeviceGetPcieThroughputFn = Return (*)(Device, int, unsigned int*);  // KB/s over 20 ms

// ---- dcgm-exporter's fields and Xid, sampled by `gpuenv export`
// (sense/nvml/nvml_sampler.cc) ----

// nvmlDeviceGetMinorNumber (/dev/nvidiaN's N) is a DeviceGetUintFn.

// nvmlValueType_t
enum : int {
  kValueTypeDouble = 0,
  kValueTypeUnsignedInt = 1,
  kValueTypeUnsignedLong = 2,
  kValueTypeUnsignedLongLong = 3,
  kValueTypeSignedLongLong = 4,
  kValueTypeSignedInt = 5,
};

// NVML_FI_* field ids of nvmlDeviceGetFieldValues.
enum : unsigned {
  kFieldMemoryTemp = 82,     // NVML_FI_DEV_MEMORY_TEMP, °C (HBM GPUs)
  kFieldNvlinkDataTx = 138,  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, KiB sent, cumulative
  kFieldNvlinkDataRx = 139,  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, KiB received, cumulative
};
// A FieldValue's scope_id for the NVLink fields: the sum over all links.
constexpr unsigned kScopeAllLinks = 0xFFFFFFFFu;

// nvmlFieldValue_t: in fieldId and scopeId; out the rest.
struct FieldValue {
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;     // microseconds since 1970
  long long latency_usec;
  int value_type;          // nvmlValueType_t
  Return nvml_return;
  union {
    double d;
    unsigned int ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
  } value;
};
static_assert(sizeof(FieldValue) == 40);
static_assert(offsetof(FieldValue, value_type) == 24);
static_assert(offsetof(FieldValue, value) == 32);

using DeviceGetFieldValuesFn = Return (*)(Device, int, FieldValue*);

// nvmlDeviceGetEncoderUtilization / nvmlDeviceGetDecoderUtilization(device,
// percent, sampling period in µs).
using DeviceGetCodecUtilizationFn = Return (*)(Device, unsigned int*, unsigned int*);

// nvmlNvLinkErrorCounter_t
enum : int {
  kNvlinkErrorDlReplay = 0,    // NVML_NVLINK_ERROR_DL_REPLAY
  kNvlinkErrorDlRecovery = 1,  // NVML_NVLINK_ERROR_DL_RECOVERY
  kNvlinkErrorDlCrcFlit = 2,   // NVML_NVLINK_ERROR_DL_CRC_FLIT
  kNvlinkErrorDlCrcData = 3,   // NVML_NVLINK_ERROR_DL_CRC_DATA
};
// nvmlDeviceGetNvLinkErrorCounter(device, link, nvmlNvLinkErrorCounter_t, count since the driver loaded)
using DeviceGetNvLinkErrorCounterFn = Return (*)(Device, unsigned int, int, unsigned long long*);

using EventSet = struct OpaqueEventSet*;  // nvmlEventSet_t
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8;  // nvmlEventTypeXidCriticalError

// nvmlEventData_t: eventData is the Xid for an Xid event.
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
static_assert(sizeof(EventData) == 32);

using EventSetCreateFn = Return (*)(EventSet*);
using DeviceRegisterEventsFn = Return (*)(Device, unsigned long long, EventSet);
using EventSetWaitFn = Return (*)(EventSet, EventData*, unsigned int);  // _v2; timeout ms; kErrorTimeout when none
using EventSetFreeFn = Return (*)(EventSet);

}  // namespace gpuenv::nvml

// ---- NVML GPM (GPU performance monitoring, Hopper and newer; R520+):
// sampled by `gpuenv export` and the job watcher (sense/nvml/nvml_gpm.cc) ----
namespace gpuenv::nvml {

using GpmSample = struct OpaqueGpmSample*;  // nvmlGpmSample_t (a handle, passed by value)

// nvmlGpmMetricId_t: the ones gpuenv reads (values as in nvml.h).
enum : unsigned int {
  kGpmGraphicsUtil = 1,    // NVML_GPM_METRIC_GRAPHICS_UTIL: time a graphics/compute context was active, %
  kGpmSmUtil = 2,          // NVML_GPM_METRIC_SM_UTIL: SMs busy, %
  kGpmSmOccupancy = 3,     // NVML_GPM_METRIC_SM_OCCUPANCY: warps resident of the maximum, %
  kGpmAnyTensorUtil = 5,   // NVML_GPM_METRIC_ANY_TENSOR_UTIL: SMs' time in any tensor instruction, %
  kGpmDramBwUtil = 10,     // NVML_GPM_METRIC_DRAM_BW_UTIL: DRAM bandwidth of the peak, %
  kGpmFp32Util = 12,       // NVML_GPM_METRIC_FP32_UTIL: non-tensor FP32 math, %
  kGpmFp16Util = 13,       // NVML_GPM_METRIC_FP16_UTIL: non-tensor FP16 math, %
  kGpmPcieTxPerSec = 20,   // NVML_GPM_METRIC_PCIE_TX_PER_SEC: PCIe traffic from the GPU, MiB/s
  kGpmPcieRxPerSec = 21,   // NVML_GPM_METRIC_PCIE_RX_PER_SEC: PCIe traffic to the GPU, MiB/s
};

/// NVML_GPM_METRIC_MAX of CUDA 13's nvml.h. The array was 98 entries in
/// CUDA 12.0-12.3 and 210 later; the version word stayed 1 while it grew,
/// so the struct passed is sized for the newest header: a driver reads at
/// most its own size of it, and numMetrics entries.
inline constexpr unsigned kGpmMetricMax = 333;
inline constexpr unsigned int kGpmMetricsGetVersion = 1;  // NVML_GPM_METRICS_GET_VERSION
inline constexpr unsigned int kGpmSupportVersion = 1;     // NVML_GPM_SUPPORT_VERSION

// nvmlGpmMetric_t
struct GpmMetric {
  unsigned int metric_id;  // in
  Return nvml_return;      // out: value is valid only when kSuccess
  double value;            // out
  struct {
    char* short_name;
    char* long_name;
    char* unit;
  } metric_info;  // out; may be null
};
static_assert(sizeof(GpmMetric) == 40);
static_assert(offsetof(GpmMetric, value) == 8);

// nvmlGpmMetricsGet_t
struct GpmMetricsGet {
  unsigned int version;      // kGpmMetricsGetVersion
  unsigned int num_metrics;  // entries of metrics[] to fill
  GpmSample sample1, sample2;
  GpmMetric metrics[kGpmMetricMax];
};
static_assert(offsetof(GpmMetricsGet, sample1) == 8);
static_assert(offsetof(GpmMetricsGet, metrics) == 24);
static_assert(sizeof(GpmMetricsGet) == 24 + 40 * kGpmMetricMax);

// nvmlGpmSupport_t
struct GpmSupport {
  unsigned int version;  // kGpmSupportVersion
  unsigned int is_supported_device;
};
static_assert(sizeof(GpmSupport) == 8);

using GpmQueryDeviceSupportFn = Return (*)(Device, GpmSupport*);
using GpmSampleAllocFn = Return (*)(GpmSample*);
using GpmSampleFreeFn = Return (*)(GpmSample);
using GpmSampleGetFn = Return (*)(Device, GpmSample);
using GpmMigSampleGetFn = Return (*)(Device, unsigned int, GpmSample);  // parent GPU, GPU instance id
using GpmMetricsGetFn = Return (*)(GpmMetricsGet*);

}  // namespace gpuenv::nvml

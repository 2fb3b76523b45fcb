// The subset of DCGM's C API (libdcgm.so.4, embedded mode) that gpuenv
// calls, declared here rather than taken from dcgm_agent.h: opaque handles,
// integer codes and the copied structs, their sizes checked. Copied from
// NVIDIA/DCGM dcgmlib/dcgm_agent.h, dcgm_structs.h and dcgm_fields.h (DCGM
// 3.3 to 4.x: the version words below are the ones dcgm_structs.h asserts).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuenv::dcgm {

using Return = int;          // dcgmReturn_t: 0 ok, negative an error
using Handle = std::uintptr_t;     // dcgmHandle_t
using GroupId = std::uintptr_t;    // dcgmGpuGrp_t
using FieldGroupId = std::uintptr_t;  // dcgmFieldGrp_t

inline constexpr Return kOk = 0;           // DCGM_ST_OK
inline constexpr int kOperationModeAuto = 1;  // DCGM_OPERATION_MODE_AUTO: DCGM samples on its own thread
inline constexpr int kGroupEmpty = 1;         // DCGM_GROUP_EMPTY
inline constexpr int kEntityGpu = 1;          // DCGM_FE_GPU
inline constexpr int kLoggingNone = 0;        // DcgmLoggingSeverityNone
inline constexpr int kMaxDevices = 32;        // DCGM_MAX_NUM_DEVICES
inline constexpr unsigned kLiveData = 1;      // DCGM_FV_FLAG_LIVE_DATA

// Field types (DCGM_FT_*) and the values that mean "no value" (DCGM_*_BLANK).
inline constexpr unsigned short kTypeDouble = 'd', kTypeString = 's';
inline constexpr double kFp64Blank = 140737488355328.0;  // DCGM_FP64_IS_BLANK: >= this
inline constexpr const char* kStrBlank = "<<<NULL>>>";

// Field ids (dcgm_fields.h).
inline constexpr unsigned short kFieldUuid = 54;             // DCGM_FI_DEV_UUID
inline constexpr unsigned short kProfGrEngineActive = 1001;  // DCGM_FI_PROF_GR_ENGINE_ACTIVE
inline constexpr unsigned short kProfSmActive = 1002;
inline constexpr unsigned short kProfSmOccupancy = 1003;
inline constexpr unsigned short kProfPipeTensorActive = 1004;
inline constexpr unsigned short kProfDramActive = 1005;
inline constexpr unsigned short kProfPipeFp32Active = 1007;
inline constexpr unsigned short kProfPipeFp16Active = 1008;

/// MAKE_DCGM_VERSION: the struct's size, its version in the top byte.
constexpr unsigned make_version(std::size_t size, unsigned version) {
  return static_cast<unsigned>(size) | (version << 24);
}

/// dcgmStartEmbeddedV2Params_v1 (DcgmModuleIdCount 10 deny-list slots).
struct StartEmbeddedV2Params {
  unsigned version;
  int op_mode;
  Handle handle;      // OUT
  const char* log_file;
  int severity;
  unsigned deny_list_count;
  unsigned deny_list[10];
};
static_assert(sizeof(StartEmbeddedV2Params) == 72);
inline constexpr unsigned kStartEmbeddedV2ParamsVersion1 = make_version(sizeof(StartEmbeddedV2Params), 1);
static_assert(kStartEmbeddedV2ParamsVersion1 == 0x01000048);

/// dcgmGroupEntityPair_t.
struct EntityPair {
  int entity_group;       // dcgm_field_entity_group_t
  unsigned entity_id;     // dcgm_field_eid_t
};
static_assert(sizeof(EntityPair) == 8);

/// dcgmFieldValue_v2.
struct FieldValue {
  unsigned version;
  int entity_group;
  unsigned entity_id;
  unsigned short field_id;
  unsigned short field_type;
  int status;
  unsigned unused;
  std::int64_t ts;  // µs since 1970
  union {
    std::int64_t i64;
    double dbl;
    char str[256];    // DCGM_MAX_STR_LENGTH
    char blob[4096];  // DCGM_MAX_BLOB_LENGTH
  } value;
};
static_assert(offsetof(FieldValue, ts) == 24 && sizeof(FieldValue) == 4128);
inline constexpr unsigned kFieldValueVersion2 = make_version(sizeof(FieldValue), 2);

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using StartEmbeddedV2Fn = Return (*)(StartEmbeddedV2Params*);
using StartEmbeddedFn = Return (*)(int op_mode, Handle*);
using StopEmbeddedFn = Return (*)(Handle);
using GetAllSupportedDevicesFn = Return (*)(Handle, unsigned gpu_ids[kMaxDevices], int* count);
using GroupCreateFn = Return (*)(Handle, int type, const char* name, GroupId*);
using GroupDestroyFn = Return (*)(Handle, GroupId);
using GroupAddDeviceFn = Return (*)(Handle, GroupId, unsigned gpu_id);
using FieldGroupCreateFn = Return (*)(Handle, int count, unsigned short* field_ids, const char* name,
                                      FieldGroupId*);
using FieldGroupDestroyFn = Return (*)(Handle, FieldGroupId);
using WatchFieldsFn = Return (*)(Handle, GroupId, FieldGroupId, long long update_us, double max_keep_s,
                                 int max_keep_samples);
using UnwatchFieldsFn = Return (*)(Handle, GroupId, FieldGroupId);
using EntitiesGetLatestValuesFn = Return (*)(Handle, EntityPair* entities, unsigned entity_count,
                                             unsigned short* fields, unsigned field_count, unsigned flags,
                                             FieldValue* values);
using ErrorStringFn = const char* (*)(Return);

}  // namespace gpuenv::dcgm

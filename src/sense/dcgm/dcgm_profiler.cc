#include "sense/dcgm/dcgm_profiler.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>

namespace gpuenv {
namespace {

// The fields read, in the order of GpmRatios' members.
constexpr std::array<unsigned short, 7> kFields = {
    dcgm::kProfGrEngineActive,    dcgm::kProfSmActive,       dcgm::kProfSmOccupancy, dcgm::kProfPipeTensorActive,
    dcgm::kProfPipeFp32Active,    dcgm::kProfPipeFp16Active, dcgm::kProfDramActive};

std::array<std::optional<double>*, 7> members(GpmRatios* r) {
  return {&r->gr_engine_active, &r->sm_active,   &r->sm_occupancy, &r->tensor_active,
          &r->fp32_active,      &r->fp16_active, &r->dram_active};
}

std::vector<Symbol> symbol_table(DcgmFunctions* f) {
  return {
      {{"dcgmInit"}, &f->init, true},
      {{"dcgmShutdown"}, &f->shutdown, true},
      {{"dcgmStartEmbedded_v2"}, &f->start_embedded_v2, false},
      {{"dcgmStartEmbedded"}, &f->start_embedded, false},
      {{"dcgmStopEmbedded"}, &f->stop_embedded, true},
      {{"dcgmGetAllSupportedDevices"}, &f->supported_devices, true},
      {{"dcgmGroupCreate"}, &f->group_create, true},
      {{"dcgmGroupDestroy"}, &f->group_destroy, true},
      {{"dcgmGroupAddDevice"}, &f->group_add_device, true},
      {{"dcgmFieldGroupCreate"}, &f->field_group_create, true},
      {{"dcgmFieldGroupDestroy"}, &f->field_group_destroy, true},
      {{"dcgmWatchFields"}, &f->watch_fields, true},
      {{"dcgmUnwatchFields"}, &f->unwatch_fields, true},
      {{"dcgmEntitiesGetLatestValues"}, &f->latest_values, true},
      {{"errorString"}, &f->error_string, false},
  };
}

// A profiling value as a ratio 0..1; nullopt when blank or not a double.
std::optional<double> ratio(const dcgm::FieldValue& v) {
  if (v.status != dcgm::kOk || v.field_type != dcgm::kTypeDouble) return std::nullopt;
  double d = v.value.dbl;
  if (!std::isfinite(d) || d >= dcgm::kFp64Blank) return std::nullopt;
  return std::clamp(d, 0.0, 1.0);
}

std::optional<std::string> text(const dcgm::FieldValue& v) {
  if (v.status != dcgm::kOk || v.field_type != dcgm::kTypeString) return std::nullopt;
  std::string s(v.value.str, strnlen(v.value.str, sizeof v.value.str));
  if (s.empty() || s == dcgm::kStrBlank) return std::nullopt;
  return s;
}

std::vector<dcgm::EntityPair> gpu_entities(const std::map<unsigned, std::string>& gpus) {
  std::vector<dcgm::EntityPair> out;
  for (const auto& [id, uuid] : gpus) out.push_back({dcgm::kEntityGpu, id});
  return out;
}

}  // namespace

bool dcgm_library_loads(const std::string& library, std::string* err) {
  DynamicLibrary lib;
  return lib.open(library, err);
}

bool DcgmProfiler::fail(const char* call, dcgm::Return rc, std::string* err) {
  const char* said = fn_.error_string.call ? fn_.error_string.call(rc) : nullptr;
  *err = std::string(call) + " returned " + std::to_string(rc) + (said ? std::string(" (") + said + ")" : "");
  stop();
  return false;
}

bool DcgmProfiler::start(const std::string& library, const std::vector<std::string>& uuids,
                         std::chrono::milliseconds interval, std::string* err) {
  std::string text;
  // DCGM's host engine starts threads: once loaded, the library stays mapped.
  if (!library_.open(library, &text, /*keep_loaded=*/true)) return *err = "cannot load " + library + ": " + text, false;
  if (!library_.resolve(symbol_table(&fn_), &text) || (!fn_.start_embedded_v2.call && !fn_.start_embedded.call))
    return *err = library + " lacks " + (text.empty() ? "dcgmStartEmbedded" : text), false;
  if (dcgm::Return rc = fn_.init.call(); rc != dcgm::kOk) return fail("dcgmInit", rc, err);
  initialised_ = true;
  return start_engine(err) && find_gpus(uuids, err) && watch(interval, err);
}

// dcgmStartEmbedded_v2 where the library has it (an older one's answer
// without a handle falls back to the first version), in AUTO mode: DCGM
// samples the watched fields on its own thread.
bool DcgmProfiler::start_engine(std::string* err) {
  dcgm::Return rc = -1;
  if (fn_.start_embedded_v2.call) {
    dcgm::StartEmbeddedV2Params p{};
    p.version = dcgm::kStartEmbeddedV2ParamsVersion1;
    p.op_mode = dcgm::kOperationModeAuto;
    p.severity = dcgm::kLoggingNone;
    rc = fn_.start_embedded_v2.call(&p);
    handle_ = p.handle;
    if (rc != dcgm::kOk) return fail("dcgmStartEmbedded_v2", rc, err);
  }
  if (handle_ == 0 && fn_.start_embedded.call) {
    rc = fn_.start_embedded.call(dcgm::kOperationModeAuto, &handle_);
    if (rc != dcgm::kOk) return fail("dcgmStartEmbedded", rc, err);
  }
  engine_ = handle_ != 0;
  return engine_ || fail("dcgmStartEmbedded", rc, err);
}

// DCGM numbers GPUs its own way: each asked-for UUID is found by the UUID
// DCGM reads live for each of its GPU ids.
bool DcgmProfiler::find_gpus(const std::vector<std::string>& uuids, std::string* err) {
  unsigned ids[dcgm::kMaxDevices] = {};
  int count = 0;
  if (dcgm::Return rc = fn_.supported_devices.call(handle_, ids, &count); rc != dcgm::kOk)
    return fail("dcgmGetAllSupportedDevices", rc, err);
  count = std::clamp(count, 0, dcgm::kMaxDevices);
  std::map<unsigned, std::string> all;
  for (int i = 0; i < count; ++i) all[ids[i]];
  std::vector<dcgm::EntityPair> entities = gpu_entities(all);
  auto values = std::make_unique<dcgm::FieldValue[]>(entities.size() + 1);
  unsigned short field = dcgm::kFieldUuid;
  if (dcgm::Return rc = fn_.latest_values.call(handle_, entities.data(), entities.size(), &field, 1, dcgm::kLiveData,
                                               values.get());
      rc != dcgm::kOk)
    return fail("dcgmEntitiesGetLatestValues(DCGM_FI_DEV_UUID)", rc, err);
  for (std::size_t i = 0; i < entities.size(); ++i)
    if (std::optional<std::string> uuid = text(values[i]);
        uuid && std::find(uuids.begin(), uuids.end(), *uuid) != uuids.end())
      gpus_[values[i].entity_id] = *uuid;
  if (!gpus_.empty()) return true;
  stop();
  *err = "DCGM lists none of the GPUs without NVML GPM among its " + std::to_string(count) + " GPUs";
  return false;
}

bool DcgmProfiler::watch(std::chrono::milliseconds interval, std::string* err) {
  std::string name = "gpuenv-" + std::to_string(getpid());
  if (dcgm::Return rc = fn_.group_create.call(handle_, dcgm::kGroupEmpty, name.c_str(), &group_id_); rc != dcgm::kOk)
    return fail("dcgmGroupCreate", rc, err);
  group_ = true;
  for (const auto& [id, uuid] : gpus_)
    if (dcgm::Return rc = fn_.group_add_device.call(handle_, group_id_, id); rc != dcgm::kOk)
      return fail("dcgmGroupAddDevice", rc, err);
  std::array<unsigned short, kFields.size()> fields = kFields;
  if (dcgm::Return rc = fn_.field_group_create.call(handle_, fields.size(), fields.data(), name.c_str(), &field_group_id_);
      rc != dcgm::kOk)
    return fail("dcgmFieldGroupCreate", rc, err);
  field_group_ = true;
  long long every_us = std::max<long long>(interval.count(), 100) * 1000;
  double keep_s = std::max(4.0 * every_us / 1e6, 1.0);
  if (dcgm::Return rc = fn_.watch_fields.call(handle_, group_id_, field_group_id_, every_us, keep_s, 0); rc != dcgm::kOk)
    return fail("dcgmWatchFields", rc, err);
  watching_ = true;
  return true;
}

bool DcgmProfiler::latest(std::map<std::string, GpmRatios>* out, std::string* err) const {
  if (!watching_) return *err = "DCGM is not watching", false;
  std::vector<dcgm::EntityPair> entities = gpu_entities(gpus_);
  std::size_t n = entities.size() * kFields.size();
  auto values = std::make_unique<dcgm::FieldValue[]>(n);  // 4 kB each: not on the stack
  std::array<unsigned short, kFields.size()> fields = kFields;
  dcgm::Return rc = fn_.latest_values.call(handle_, entities.data(), entities.size(), fields.data(), fields.size(), 0,
                                           values.get());
  if (rc != dcgm::kOk) {
    const char* said = fn_.error_string.call ? fn_.error_string.call(rc) : nullptr;
    *err = "dcgmEntitiesGetLatestValues returned " + std::to_string(rc) + (said ? std::string(" (") + said + ")" : "");
    return false;
  }
  // The answer need not keep the order asked: each value names its GPU and field.
  for (std::size_t i = 0; i < n; ++i) {
    auto gpu = gpus_.find(values[i].entity_id);
    auto at = std::find(kFields.begin(), kFields.end(), values[i].field_id);
    if (values[i].entity_group != dcgm::kEntityGpu || gpu == gpus_.end() || at == kFields.end()) continue;
    *members(&(*out)[gpu->second])[at - kFields.begin()] = ratio(values[i]);
  }
  return true;
}

void DcgmProfiler::stop() {
  if (watching_) fn_.unwatch_fields.call(handle_, group_id_, field_group_id_);
  if (field_group_) fn_.field_group_destroy.call(handle_, field_group_id_);
  if (group_) fn_.group_destroy.call(handle_, group_id_);
  if (engine_) fn_.stop_embedded.call(handle_);
  if (initialised_) fn_.shutdown.call();
  watching_ = field_group_ = group_ = engine_ = initialised_ = false;
  handle_ = 0;
  gpus_.clear();
}

}  // namespace gpuenv

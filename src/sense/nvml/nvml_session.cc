#include "sense/nvml/nvml_session.h"

#include <algorithm>

#include "sense/nvml/nvml_call.h"
#include "sense/nvml/nvml_errors.h"

namespace gpuenv {
namespace {

// What NVML's own nvmlDeviceGetHandleByUUID says of a UUID it does not
// list is NOT_FOUND ("nothing to do"); a GPU the plan names that NVML
// cannot see is gone or hidden, which GPU_NOT_FOUND's row explains.
Problem not_listed(const std::string& uuid) {
  return nvml_problem("finding " + uuid + " among NVML's GPUs", nvml::kErrorGpuNotFound, nullptr);
}

}  // namespace

bool NvmlSession::open(const std::string& library, Problem* err) {
  close();
  library_ = library;
  if (!load_nvml(library, &nvml_, err)) return false;
  nvml::Return rc = nvml_.fn.init.call();
  if (rc != nvml::kSuccess) {
    *err = failed(nvml_.fn.init.name, "", rc);
    return false;
  }
  initialised_ = true;
  return true;
}

void NvmlSession::close() {
  if (initialised_) nvml_.fn.shutdown.call();
  initialised_ = false;
}

Problem NvmlSession::failed(const char* call, const std::string& subject, nvml::Return rc) const {
  return nvml_problem(call_name(call, subject), rc, nvml_error_text(nvml_, rc));
}

bool NvmlSession::count(unsigned* n, Problem* err) const {
  nvml::Return rc = nvml_.fn.count.call(n);
  if (rc == nvml::kSuccess) return true;
  *err = failed(nvml_.fn.count.name, "", rc);
  return false;
}

bool NvmlSession::handle(unsigned index, nvml::Device* d, Problem* err) const {
  nvml::Return rc = nvml_.fn.handle.call(index, d);
  if (rc == nvml::kSuccess) return true;
  *err = failed(nvml_.fn.handle.name, "GPU " + std::to_string(index), rc);
  return false;
}

bool NvmlSession::gpus(std::vector<NvmlGpu>* out, Problem* err, bool migs) const {
  out->clear();
  if (!nvml_.fn.uuid.call) {
    *err = nvml_symbol_missing(library_, "nvmlDeviceGetUUID (the GPUs cannot be told apart)");
    return false;
  }
  unsigned n = 0;
  if (!count(&n, err)) return false;
  // A device that gives no handle or UUID is not listed.
  auto uuid_of = [&](nvml::Device d, std::string* uuid) {
    char buf[nvml::kUuidBufferSize] = {0};
    if (nvml_.fn.uuid.call(d, buf, sizeof buf) != nvml::kSuccess) return false;
    *uuid = c_string(buf);
    return true;
  };
  for (unsigned i = 0; i < n; ++i) {
    NvmlGpu g;
    g.index = i;
    Problem ignored;
    if (!handle(i, &g.handle, &ignored) || !uuid_of(g.handle, &g.uuid)) continue;
    out->push_back(g);
    if (!migs) continue;
    NvmlCaller call(nvml_);  // this GPU's MIG devices: what NVML does not say is none
    for (const MigSlots::Slot& m : mig_slots(call, nvml_.fn, g.handle).devices) {
      NvmlGpu mig;
      mig.index = i, mig.handle = m.handle, mig.parent = g.handle;
      if (!uuid_of(mig.handle, &mig.uuid)) continue;
      if (std::optional<std::uint32_t> id = get_uint(call, nvml_.fn.gpu_instance_id, mig.handle))
        mig.gpu_instance_id = *id;
      out->push_back(std::move(mig));
    }
  }
  return true;
}

bool NvmlSession::all_listed(const std::vector<NvmlGpu>& listed, const std::vector<std::string>& uuids,
                             Problem* err) {
  for (const std::string& want : uuids)
    if (std::none_of(listed.begin(), listed.end(), [&](const NvmlGpu& g) { return g.uuid == want; })) {
      *err = not_listed(want);
      return false;
    }
  return true;
}

bool NvmlSession::find(const std::vector<std::string>& uuids, std::vector<NvmlGpu>* out, Problem* err) const {
  std::vector<NvmlGpu> listed;
  if (!gpus(&listed, err) || !all_listed(listed, uuids, err)) return false;
  out->clear();
  for (const std::string& uuid : uuids)
    out->push_back(*std::find_if(listed.begin(), listed.end(), [&](const NvmlGpu& g) { return g.uuid == uuid; }));
  return true;
}

}  // namespace gpuenv

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

bool NvmlSession::gpus(std::vector<NvmlGpu>* out, Problem* err) const {
  out->clear();
  if (!nvml_.fn.uuid.call) {
    *err = nvml_symbol_missing(library_, "nvmlDeviceGetUUID (the GPUs cannot be told apart)");
    return false;
  }
  unsigned n = 0;
  if (!count(&n, err)) return false;
  for (unsigned i = 0; i < n; ++i) {
    NvmlGpu g;
    g.index = i;
    char buf[nvml::kUuidBufferSize] = {0};
    Problem ignored;  // a GPU that gives no handle or UUID is not listed
    if (!handle(i, &g.handle, &ignored) || nvml_.fn.uuid.call(g.handle, buf, sizeof buf) != nvml::kSuccess)
      continue;
    g.uuid = c_string(buf);
    out->push_back(std::move(g));
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

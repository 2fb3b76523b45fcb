// libFuzzer: any bytes as gpuenv-kubelet's answer (its JSON carries what a
// kubelet sent): read_kubelet_answer never crashes, and says kOk only with
// every device it kept, kFailed only with a reason.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sense/kubelet/pod_resources.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  gpuenv::PodDevices d;
  std::string err;
  int kind = 0;
  gpuenv::PodListStatus s = gpuenv::read_kubelet_answer(in, &d, &err, &kind);
  if (s == gpuenv::PodListStatus::kNoSocket) std::abort();
  if (s == gpuenv::PodListStatus::kFailed && err.empty()) std::abort();
  if (s == gpuenv::PodListStatus::kOk && !err.empty()) std::abort();
  return 0;
}

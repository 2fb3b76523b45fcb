// Kernel launch cost: empty kernels back to back (the rate a stream accepts
// them), and the round trip of one launch and a synchronize.
#include <algorithm>
#include <chrono>
#include <vector>

#include "common.h"

namespace gpuenv_plugin {
namespace {

__global__ void empty_kernel() {}

constexpr int kLaunchesPerTrial = 1000;
constexpr int kRoundTripsPerTrial = 100;

bool launch_once(cudaStream_t s, Result* r) {
  empty_kernel<<<1, 1, 0, s>>>();
  CK(cudaGetLastError());
  return true;
}

bool back_to_back(const Params* p, cudaStream_t s, Result* r) {
  Op op = [&] { return launch_once(s, r); };
  for (int i = 0; i < 100; ++i)
    if (!op()) return false;
  for (int t = 0; t < std::max(1, p->trials); ++t) {
    double seconds = 0;
    if (!time_batch(s, op, kLaunchesPerTrial, &seconds, r)) return false;
    add_sample(r, seconds / kLaunchesPerTrial);
  }
  add_detail(r, "%d trials of %d launches, CUDA events, median", p->trials, kLaunchesPerTrial);
  return true;
}

bool round_trips(const Params* p, cudaStream_t s, Result* r) {
  for (int i = 0; i < 100; ++i) {
    if (!launch_once(s, r)) return false;
    CK(cudaStreamSynchronize(s));
  }
  for (int t = 0; t < std::max(1, p->trials); ++t) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRoundTripsPerTrial; ++i) {
      if (!launch_once(s, r)) return false;
      CK(cudaStreamSynchronize(s));
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    add_sample(r, seconds / kRoundTripsPerTrial);
  }
  add_detail(r, "%d trials of %d launch+synchronize, host clock, median", p->trials, kRoundTripsPerTrial);
  return true;
}

}  // namespace

bool run_launch(const Params* p, Result* r) {
  Stream stream;
  if (!stream.create(r)) return false;
  r->work = 1;
  return p->pinned ? round_trips(p, stream.get(), r) : back_to_back(p, stream.get(), r);
}

}  // namespace gpuenv_plugin

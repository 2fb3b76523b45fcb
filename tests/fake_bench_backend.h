// A stand-in for the measuring engine's backend (bench/bench.h's Backend,
// the CUDA plugin in gpuenv): it records what it is asked and answers every
// operation with 1.1, 0.9 and 1 ms, as the tests of the engine
// (src/bench/bench_test.cc) and of the bench and check sequences
// (src/flow/bench_test.cc, src/flow/check_test.cc) need it.
#pragma once

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench/bench.h"

namespace gpuenv::testing {

/// Records what it was asked; answers with 1 ms per operation.
class FakeBackend : public bench::Backend {
 public:
  struct Call {
    std::string op, dtype;
    int device = 0, peer = -1, ndevices = 0;
    long long m = 0;
    unsigned long long bytes = 0;
    int pinned = 0;
  };
  std::vector<Call> calls;
  std::map<std::string, int> status;  // op -> status to answer with
  std::vector<bench::Device> gpus;    // what devices() lists
  std::string devices_error;          // devices() fails with it

  bool devices(std::vector<bench::Device>* out, std::string* err) override {
    if (!devices_error.empty()) return *err = devices_error, false;
    *out = gpus;
    return true;
  }
  gpuenv_bench_result run(const gpuenv_bench_params& p) override {
    calls.push_back({p.op, p.dtype ? p.dtype : "", p.device, p.peer, p.ndevices, p.m, p.bytes, p.pinned});
    gpuenv_bench_result r;
    std::memset(&r, 0, sizeof r);
    r.status = status.count(p.op) ? status[p.op] : GPUENV_BENCH_OK;
    r.nsamples = 3;
    r.samples[0] = 1.1e-3, r.samples[1] = 0.9e-3, r.samples[2] = 1e-3;
    r.work = std::string(p.op) == "gemm" ? 2.0 * p.m * p.n * p.k : 1e9;
    std::snprintf(r.message, sizeof r.message, "fake");
    return r;
  }
};

/// The CUDA device the plugin would list for sensed GPU `g`.
inline bench::Device device(int ordinal, const Gpu& g) {
  return {
      ordinal, g.name.value_or("?"), g.uuid.value_or(""), *g.compute_capability, 132, g.memory_total_bytes.value_or(0)};
}

/// The machine's GPUs as CUDA devices, ordinals 0, 1, ...
inline std::vector<bench::Device> devices_of(const Machine& m) {
  std::vector<bench::Device> out;
  for (const auto& g : m.gpus) out.push_back(device(static_cast<int>(out.size()), g));
  return out;
}

}  // namespace gpuenv::testing

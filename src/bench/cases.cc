// The cases of `gpuenv bench` and `gpuenv check`, and the parameters each
// passes to the plugin.
#include <algorithm>
#include <cstring>

#include "bench/bench.h"
#include "model/hardware/gpu_peaks.h"
#include "bench/stats.h"
#include "sys/bytes.h"

namespace gpuenv::bench {
namespace {

using Skip = std::optional<std::string>;

Skip needs_cc(const Device& d, ComputeCapability min, const std::string& what) {
  if (d.cc >= min) return std::nullopt;
  return what + " needs compute capability " + cc_string(min) + " or newer (this GPU: " + cc_string(d.cc) + ")";
}

// Leaves a fifth of the memory to the context, cuBLASLt's workspace and others.
Skip needs_memory(const Device& d, std::uint64_t bytes) {
  if (d.memory_total == 0 || static_cast<double>(bytes) <= 0.8 * static_cast<double>(d.memory_total))
    return std::nullopt;
  return "needs " + gib_text(bytes) + " of device memory (this GPU has " + gib_text(d.memory_total) + ")";
}

std::optional<GpuPeaks> peaks_of(const BenchContext& ctx, const Device& d) {
  bool mig = false;
  const Gpu* g = ctx.gpu_of(d, &mig);
  if (mig) return std::nullopt;  // a slice of the GPU
  return peaks_for(g && g->name ? *g->name : d.name);
}

std::optional<double> host_link_peak(const BenchContext& ctx, const Device& d) {
  const Gpu* g = ctx.gpu_of(d);
  if (!g) return std::nullopt;
  return host_link_peak_gbps(d.name, g->pcie);
}

gpuenv_bench_params params(const BenchContext& ctx, const char* op, const Device& d) {
  gpuenv_bench_params p;
  std::memset(&p, 0, sizeof p);
  const BenchOptions& o = ctx.options;
  p.op = op;
  p.device = d.ordinal;
  p.peer = -1;
  p.warmup = o.warmup;
  p.trials = std::clamp(o.trials, 1, GPUENV_BENCH_MAX_SAMPLES);
  p.min_trial_s = o.min_trial_s;
  p.algos = o.algos;
  p.duration_s = o.duration_s;
  p.fraction = o.memtest_fraction;
  p.seed = o.seed;
  return p;
}

Result from_plugin(const gpuenv_bench_result& pr, FigureKind metric) {
  Result r;
  static const BenchStatus kStatus[] = {BenchStatus::kOk, BenchStatus::kSkipped, BenchStatus::kWrong, BenchStatus::kError};
  r.status = pr.status >= 0 && pr.status <= 3 ? kStatus[pr.status] : BenchStatus::kError;
  r.message = std::string(pr.message, strnlen(pr.message, sizeof pr.message));
  r.detail = std::string(pr.detail, strnlen(pr.detail, sizeof pr.detail));
  r.metric = metric;
  int n = std::clamp(pr.nsamples, 0, GPUENV_BENCH_MAX_SAMPLES);
  r.samples.assign(pr.samples, pr.samples + n);
  r.work = pr.work;
  r.error = pr.error;
  r.mismatches = pr.mismatches;
  return r;
}

Result run_plugin(Backend& b, const gpuenv_bench_params& p, FigureKind metric, std::optional<double> peak) {
  Result r = from_plugin(b.run(p), metric);
  r.peak = peak;
  return r;
}

std::uint64_t gemm_bytes(const std::string& dtype, long long n) {
  std::uint64_t elems = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(n);
  if (dtype == "fp32" || dtype == "tf32") return 3 * elems * 4;
  if (dtype == "fp8") return 2 * elems + 2 * elems;  // fp8 inputs, bf16 output
  return 3 * elems * 2;
}

Case gemm_case(const std::string& dtype, int n) {
  Case c;
  c.key = "gemm_" + dtype + "_" + std::to_string(n);
  c.description = "cuBLASLt GEMM " + dtype + " " + std::to_string(n) + "^3";
  c.filter = [dtype, n](const BenchContext&, const Target& t) -> Skip {
    const Device& d = t.devices.at(0);
    if (dtype == "tf32" || dtype == "bf16")
      if (auto s = needs_cc(d, {8, 0}, dtype)) return s;
    if (dtype == "fp8")
      if (auto s = needs_cc(d, {8, 9}, "fp8 e4m3")) return s;
    return needs_memory(d, gemm_bytes(dtype, n));
  };
  c.run = [dtype, n](Backend& b, const BenchContext& ctx, const Target& t) {
    const Device& d = t.devices.at(0);
    gpuenv_bench_params p = params(ctx, "gemm", d);
    p.dtype = dtype.c_str();
    p.m = p.n = p.k = n;
    auto peaks = peaks_of(ctx, d);
    return run_plugin(b, p, FigureKind::kTflops, peaks ? gemm_peak(*peaks, dtype) : std::nullopt);
  };
  return c;
}

Case device_copy_case(const char* op, const std::string& description) {
  Case c;
  c.key = op;
  c.description = description;
  c.filter = [](const BenchContext& ctx, const Target& t) {
    return needs_memory(t.devices.at(0), 2 * ctx.options.copy_bytes);
  };
  c.run = [op](Backend& b, const BenchContext& ctx, const Target& t) {
    const Device& d = t.devices.at(0);
    gpuenv_bench_params p = params(ctx, op, d);
    p.bytes = ctx.options.copy_bytes;
    auto peaks = peaks_of(ctx, d);
    return run_plugin(b, p, FigureKind::kGBps, peaks ? std::optional(peaks->memory_gbps) : std::nullopt);
  };
  return c;
}

Case host_copy_case(const char* op, bool pinned) {
  Case c;
  c.key = std::string(op) + (pinned ? "_pinned" : "_pageable");
  c.description = std::string(op[0] == 'h' ? "host to device" : "device to host") +
                  (pinned ? ", pinned memory" : ", pageable memory");
  c.run = [op, pinned](Backend& b, const BenchContext& ctx, const Target& t) {
    const Device& d = t.devices.at(0);
    gpuenv_bench_params p = params(ctx, op, d);
    p.bytes = ctx.options.host_bytes;
    p.pinned = pinned ? 1 : 0;
    return run_plugin(b, p, FigureKind::kGBps, host_link_peak(ctx, d));
  };
  return c;
}

Case launch_case(bool roundtrip) {
  Case c;
  c.key = roundtrip ? "launch_roundtrip" : "launch_overhead";
  c.description = roundtrip ? "empty kernel: launch and synchronize" : "empty kernels back to back, per launch";
  c.run = [roundtrip](Backend& b, const BenchContext& ctx, const Target& t) {
    gpuenv_bench_params p = params(ctx, "launch", t.devices.at(0));
    p.pinned = roundtrip ? 1 : 0;
    return run_plugin(b, p, FigureKind::kMicros, std::nullopt);
  };
  return c;
}

Case p2p_case(bool via_host) {
  Case c;
  c.key = via_host ? "p2p_via_host" : "p2p";
  c.description = via_host ? "GPU to GPU through pinned host memory" : "GPU to GPU copy (peer access)";
  c.scope = CaseScope::kPair;
  c.run = [via_host](Backend& b, const BenchContext& ctx, const Target& t) {
    gpuenv_bench_params p = params(ctx, via_host ? "p2p_via_host" : "p2p", t.devices.at(0));
    p.peer = t.devices.at(1).ordinal;
    p.bytes = ctx.options.host_bytes;
    return run_plugin(b, p, FigureKind::kGBps, std::nullopt);
  };
  return c;
}

Case allreduce_case() {
  Case c;
  c.key = "nccl_all_reduce";
  c.description = "NCCL all-reduce, fp32 sum, bus bandwidth";
  c.scope = CaseScope::kAll;
  c.run = [](Backend& b, const BenchContext& ctx, const Target& t) {
    gpuenv_bench_params p = params(ctx, "all_reduce", t.devices.at(0));
    p.ndevices = std::min<int>(t.devices.size(), GPUENV_BENCH_MAX_DEVICES);
    for (int i = 0; i < p.ndevices; ++i) p.devices[i] = t.devices[i].ordinal;
    p.bytes = ctx.options.allreduce_bytes;
    return run_plugin(b, p, FigureKind::kAllReduceBus, std::nullopt);
  };
  return c;
}

// bf16 where the GPU has it, else fp16: the type training runs in.
std::string check_dtype(const Device& d) { return d.cc >= ComputeCapability{8, 0} ? "bf16" : "fp16"; }

Case check_gemm_case(const char* key, const char* op, int n) {
  Case c;
  c.key = key;
  c.description = std::string(op) == "gemm" ? "GEMM " + std::to_string(n) + "^3, verified"
                                            : "sustained GEMMs " + std::to_string(n) + "^3, each result checked";
  c.filter = [n](const BenchContext&, const Target& t) { return needs_memory(t.devices.at(0), gemm_bytes("bf16", n)); };
  c.run = [op, n](Backend& b, const BenchContext& ctx, const Target& t) {
    const Device& d = t.devices.at(0);
    gpuenv_bench_params p = params(ctx, op, d);
    std::string dtype = check_dtype(d);
    p.dtype = dtype == "bf16" ? "bf16" : "fp16";
    p.m = p.n = p.k = n;
    auto peaks = peaks_of(ctx, d);
    return run_plugin(b, p, FigureKind::kTflops, peaks ? gemm_peak(*peaks, dtype) : std::nullopt);
  };
  return c;
}

Case memtest_case() {
  Case c;
  c.key = "memtest";
  c.description = "memory pattern test over most of free memory";
  c.run = [](Backend& b, const BenchContext& ctx, const Target& t) {
    gpuenv_bench_params p = params(ctx, "memtest", t.devices.at(0));
    return run_plugin(b, p, FigureKind::kErrors, std::nullopt);
  };
  return c;
}

}  // namespace

std::vector<Case> bench_cases(const BenchOptions& o) {
  std::vector<Case> cases;
  for (const char* dtype : {"bf16", "fp16", "tf32", "fp32", "fp8"})
    for (int n : o.sizes) cases.push_back(gemm_case(dtype, n));
  cases.push_back(device_copy_case("copy_kernel", "device copy, vectorised kernel (read + write)"));
  cases.push_back(device_copy_case("memcpy_d2d", "device copy, cudaMemcpy (read + write)"));
  for (bool pinned : {true, false}) {
    cases.push_back(host_copy_case("h2d", pinned));
    cases.push_back(host_copy_case("d2h", pinned));
  }
  cases.push_back(launch_case(false));
  cases.push_back(launch_case(true));
  cases.push_back(p2p_case(false));
  cases.push_back(p2p_case(true));
  cases.push_back(allreduce_case());
  return cases;
}

std::vector<Case> check_cases(const BenchOptions&, bool long_check) {
  std::vector<Case> cases = {check_gemm_case("check_gemm", "gemm", 2048),
                             device_copy_case("check_copy", "device copy, verified")};
  cases.back().run = [](Backend& b, const BenchContext& ctx, const Target& t) {
    gpuenv_bench_params p = params(ctx, "copy_kernel", t.devices.at(0));
    p.bytes = ctx.options.copy_bytes;
    auto peaks = peaks_of(ctx, t.devices.at(0));
    return run_plugin(b, p, FigureKind::kGBps, peaks ? std::optional(peaks->memory_gbps) : std::nullopt);
  };
  if (long_check) {
    cases.push_back(check_gemm_case("sustained_gemm", "sustained_gemm", 8192));
    cases.push_back(memtest_case());
  }
  return cases;
}

}  // namespace gpuenv::bench

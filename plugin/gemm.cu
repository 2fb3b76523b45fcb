// Dense GEMM through cuBLASLt: random operands generated on the device, a
// 64 MiB workspace, several heuristics timed and the fastest kept, then the
// timed trials, and the result checked against fp64 on the host.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common.h"
#include "cublaslt.h"
#include "random.h"

namespace gpuenv_plugin {
namespace {

constexpr size_t kWorkspaceBytes = 64ull << 20;
constexpr int kSampleRows = 16;  // verification: 16 rows x 16 columns of D

struct GemmType {
  const char* name;
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  size_t ab_size, cd_size;
  double tolerance;  // relative error (2-norm) over the sampled entries
};

const GemmType kTypes[] = {
    {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 1e-4},
    {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 5e-3},
    {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 5e-3},
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 1e-2},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 1e-2},
};

const GemmType* find_type(const char* name) {
  for (const auto& t : kTypes)
    if (name && std::strcmp(t.name, name) == 0) return &t;
  return nullptr;
}

template <typename T>
__global__ void fill_kernel(T* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = T(uniform(seed, i));
}

template <typename T>
__global__ void gather_kernel(const T* d, const unsigned long long* idx, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(d[idx[i]]);
}

// The value the device stored for element i, as the host computes it.
float host_value(cudaDataType_t t, uint64_t seed, uint64_t i) {
  float x = uniform(seed, i);
  switch (t) {
    case CUDA_R_16F:
      return static_cast<float>(__half(x));
    case CUDA_R_16BF:
      return static_cast<float>(__nv_bfloat16(x));
    case CUDA_R_8F_E4M3:
      return static_cast<float>(__nv_fp8_e4m3(x));
    default:
      return x;
  }
}

bool fill(cudaDataType_t t, void* p, size_t n, uint64_t seed, cudaStream_t s, int grid, Result* r) {
  switch (t) {
    case CUDA_R_16F:
      fill_kernel<<<grid, 256, 0, s>>>(static_cast<__half*>(p), n, seed);
      break;
    case CUDA_R_16BF:
      fill_kernel<<<grid, 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed);
      break;
    case CUDA_R_8F_E4M3:
      fill_kernel<<<grid, 256, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed);
      break;
    default:
      fill_kernel<<<grid, 256, 0, s>>>(static_cast<float*>(p), n, seed);
      break;
  }
  CK(cudaGetLastError());
  return true;
}

bool gather(cudaDataType_t t, const void* d, const unsigned long long* idx, float* out, int n, cudaStream_t s,
            Result* r) {
  int grid = (n + 255) / 256;
  switch (t) {
    case CUDA_R_16F:
      gather_kernel<<<grid, 256, 0, s>>>(static_cast<const __half*>(d), idx, out, n);
      break;
    case CUDA_R_16BF:
      gather_kernel<<<grid, 256, 0, s>>>(static_cast<const __nv_bfloat16*>(d), idx, out, n);
      break;
    default:
      gather_kernel<<<grid, 256, 0, s>>>(static_cast<const float*>(d), idx, out, n);
      break;
  }
  CK(cudaGetLastError());
  return true;
}

// D = op(A) op(B) with op(A) = A^T ("TN", which fp8 requires): A is k x m
// and B is k x n, both column-major, so row i of op(A) and column j of B
// are contiguous runs of k values.
struct Gemm {
  const GemmType* type = nullptr;
  uint64_t m = 0, n = 0, k = 0;
  uint64_t seed_a = 0, seed_b = 0;
  DeviceMemory a, b, d, workspace;
  Stream stream;
  const CublasLt* lt = nullptr;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Gemm();
};

Gemm::~Gemm() {
  if (!lt) return;
  if (pref) lt->pref_destroy(pref);
  if (la) lt->layout_destroy(la);
  if (lb) lt->layout_destroy(lb);
  if (ld) lt->layout_destroy(ld);
  if (desc) lt->desc_destroy(desc);
  if (handle) lt->destroy(handle);
}

bool lt_ok(const CublasLt* lt, cublasStatus_t s, const char* call, Result* r) {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  return fail(r, GPUENV_BENCH_ERROR, "%s: %s", call, lt->status_string(s));
}
#define LT(call)                                              \
  do {                                                        \
    if (!lt_ok(g->lt, (g->lt->call), #call, r)) return false; \
  } while (0)

bool alloc_operands(const Params* p, Gemm* g, Result* r) {
  g->m = p->m, g->n = p->n, g->k = p->k;
  g->seed_a = mix64(p->seed + 1), g->seed_b = mix64(p->seed + 2);
  size_t ab = g->type->ab_size, cd = g->type->cd_size;
  if (!g->stream.create(r) || !g->a.alloc(g->k * g->m * ab, r) || !g->b.alloc(g->k * g->n * ab, r) ||
      !g->d.alloc(g->m * g->n * cd, r) || !g->workspace.alloc(kWorkspaceBytes, r))
    return false;
  int grid = grid_for(p->device, 4);
  cudaStream_t s = g->stream.get();
  if (!fill(g->type->ab, g->a.as<void>(), g->k * g->m, g->seed_a, s, grid, r) ||
      !fill(g->type->ab, g->b.as<void>(), g->k * g->n, g->seed_b, s, grid, r))
    return false;
  CK(cudaMemsetAsync(g->d.as<void>(), 0xff, g->d.bytes(), s));  // NaN: unwritten entries show
  return true;
}

bool describe(Gemm* g, uint32_t reduction_mask, Result* r) {
  const GemmType& t = *g->type;
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  uint64_t ws = kWorkspaceBytes;
  LT(create(&g->handle));
  LT(desc_create(&g->desc, t.compute, CUDA_R_32F));
  LT(desc_set(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  LT(desc_set(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  LT(layout_create(&g->la, t.ab, g->k, g->m, g->k));
  LT(layout_create(&g->lb, t.ab, g->k, g->n, g->k));
  LT(layout_create(&g->ld, t.cd, g->m, g->n, g->m));
  LT(pref_create(&g->pref));
  LT(pref_set(g->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  if (reduction_mask != CUBLASLT_REDUCTION_SCHEME_MASK)
    LT(pref_set(g->pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reduction_mask, sizeof reduction_mask));
  return true;
}

bool heuristics(Gemm* g, int wanted, std::vector<cublasLtMatmulHeuristicResult_t>* out, Result* r) {
  out->resize(std::clamp(wanted, 1, 64));
  int returned = 0;
  LT(heuristic(g->handle, g->desc, g->la, g->lb, g->ld, g->ld, g->pref, static_cast<int>(out->size()), out->data(),
               &returned));
  out->resize(returned);
  auto unusable = [](const cublasLtMatmulHeuristicResult_t& h) {
    return h.state != CUBLAS_STATUS_SUCCESS || h.workspaceSize > kWorkspaceBytes;
  };
  out->erase(std::remove_if(out->begin(), out->end(), unusable), out->end());
  if (out->empty())
    return fail(r, GPUENV_BENCH_ERROR, "cublasLtMatmulAlgoGetHeuristic: no algorithm for %s %llux%llux%llu",
                g->type->name, (unsigned long long)g->m, (unsigned long long)g->n, (unsigned long long)g->k);
  return true;
}

bool matmul(Gemm* g, const cublasLtMatmulAlgo_t* algo, Result* r) {
  const float alpha = 1, beta = 0;
  LT(matmul(g->handle, g->desc, &alpha, g->a.as<void>(), g->la, g->b.as<void>(), g->lb, &beta, g->d.as<void>(), g->ld,
            g->d.as<void>(), g->ld, algo, g->workspace.as<void>(), kWorkspaceBytes, g->stream.get()));
  return true;
}

// Seconds per GEMM of one candidate, or a negative number when it fails
// (its error is dropped: another candidate may run).
double try_candidate(Gemm* g, const cublasLtMatmulAlgo_t* algo, int reps) {
  Result scratch{};
  Op op = [&] { return matmul(g, algo, &scratch); };
  double seconds = 0;
  if (!op() || !time_batch(g->stream.get(), op, reps, &seconds, &scratch)) return -1;
  return seconds / reps;
}

// Times every candidate briefly (about 0.3 s in all) and returns the fastest.
int fastest(Gemm* g, const std::vector<cublasLtMatmulHeuristicResult_t>& cands, Result* r) {
  double first = try_candidate(g, &cands[0].algo, 1);
  int reps = first > 0 ? static_cast<int>(0.3 / (cands.size() * first)) : 1;
  reps = std::clamp(reps, 1, 10);
  int best = -1;
  double best_s = 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    double s = try_candidate(g, &cands[i].algo, reps);
    if (s > 0 && (best < 0 || s < best_s)) best = static_cast<int>(i), best_s = s;
  }
  if (best < 0) fail(r, GPUENV_BENCH_ERROR, "cublasLtMatmul: all %zu algorithms failed", cands.size());
  return best;
}

std::vector<uint64_t> sample_indices(uint64_t count, uint64_t seed) {
  std::vector<uint64_t> out = {0, count - 1};
  for (int i = 0; out.size() < kSampleRows && i < 1000; ++i) {
    uint64_t v = mix64(seed + i) % count;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

std::vector<std::vector<double>> host_vectors(const Gemm& g, const std::vector<uint64_t>& which, uint64_t seed) {
  std::vector<std::vector<double>> out;
  for (uint64_t w : which) {
    std::vector<double> v(g.k);
    for (uint64_t kk = 0; kk < g.k; ++kk) v[kk] = host_value(g.type->ab, seed, kk + w * g.k);
    out.push_back(std::move(v));
  }
  return out;
}

bool fetch_samples(Gemm* g, const std::vector<unsigned long long>& idx, std::vector<float>* got, Result* r) {
  DeviceMemory didx, dout;
  int n = static_cast<int>(idx.size());
  if (!didx.alloc(n * sizeof(unsigned long long), r) || !dout.alloc(n * sizeof(float), r)) return false;
  cudaStream_t s = g->stream.get();
  CK(cudaMemcpyAsync(didx.as<void>(), idx.data(), n * sizeof(unsigned long long), cudaMemcpyHostToDevice, s));
  if (!gather(g->type->cd, g->d.as<void>(), didx.as<unsigned long long>(), dout.as<float>(), n, s, r)) return false;
  got->resize(n);
  CK(cudaMemcpyAsync(got->data(), dout.as<void>(), n * sizeof(float), cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  return true;
}

// Checks sampled entries of D against fp64 dot products of the same inputs.
bool verify(Gemm* g, uint64_t seed, Result* r) {
  std::vector<uint64_t> rows = sample_indices(g->m, seed + 3), cols = sample_indices(g->n, seed + 4);
  std::vector<unsigned long long> idx;
  for (uint64_t j : cols)
    for (uint64_t i : rows) idx.push_back(i + j * g->m);
  std::vector<float> got;
  if (!fetch_samples(g, idx, &got, r)) return false;
  auto arows = host_vectors(*g, rows, g->seed_a), bcols = host_vectors(*g, cols, g->seed_b);
  double err2 = 0, ref2 = 0;
  size_t e = 0;
  for (const auto& bc : bcols)
    for (const auto& ar : arows) {
      double ref = 0;
      for (uint64_t kk = 0; kk < g->k; ++kk) ref += ar[kk] * bc[kk];
      double diff = static_cast<double>(got[e++]) - ref;
      err2 += diff * diff, ref2 += ref * ref;
    }
  double rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  r->error = rel;
  if (!(rel <= g->type->tolerance))  // NaN fails too
    return fail(r, GPUENV_BENCH_WRONG, "relative error %.3g over %zu sampled entries exceeds %.0e for %s", rel,
                idx.size(), g->type->tolerance, g->type->name);
  add_detail(r, "verified: rel. error %.1e on %zu entries vs fp64", rel, idx.size());
  return true;
}

bool prepare(const Params* p, Gemm* g, uint32_t reduction_mask, Result* r) {
  g->type = find_type(p->dtype);
  if (!g->type) return fail(r, GPUENV_BENCH_ERROR, "unknown GEMM type %s", p->dtype ? p->dtype : "(none)");
  if (p->m <= 0 || p->n <= 0 || p->k <= 0) return fail(r, GPUENV_BENCH_ERROR, "GEMM sizes must be positive");
  std::string err;
  g->lt = cublaslt(&err);
  if (!g->lt) return fail(r, GPUENV_BENCH_ERROR, "%s", err.c_str());
  return alloc_operands(p, g, r) && describe(g, reduction_mask, r);
}

}  // namespace

bool run_gemm(const Params* p, Result* r) {
  Gemm g;
  std::vector<cublasLtMatmulHeuristicResult_t> cands;
  if (!prepare(p, &g, CUBLASLT_REDUCTION_SCHEME_MASK, r) || !heuristics(&g, p->algos, &cands, r)) return false;
  int best = fastest(&g, cands, r);
  if (best < 0) return false;
  Op op = [&] { return matmul(&g, &cands[best].algo, r); };
  if (!time_trials(p, g.stream.get(), op, r)) return false;
  r->work = 2.0 * g.m * g.n * g.k;
  add_detail(r, "fastest of %zu cuBLASLt algorithms (#%d), 64 MiB workspace; ", cands.size(), best + 1);
  return verify(&g, p->seed, r);
}

// ---- sustained GEMM (check --long) ----

namespace {

// An order-independent checksum of D's bits: equal results, equal sums.
__global__ void checksum_kernel(const uint32_t* d, size_t words, unsigned long long* out) {
  unsigned long long acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words; i += size_t(gridDim.x) * blockDim.x)
    acc += mix64((static_cast<uint64_t>(i) << 32) | d[i]);
  for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}

bool gemm_and_checksum(Gemm* g, const cublasLtMatmulAlgo_t* algo, unsigned long long* slot, int grid, Result* r) {
  if (!matmul(g, algo, r)) return false;
  checksum_kernel<<<grid, 256, 0, g->stream.get()>>>(g->d.as<uint32_t>(), g->d.bytes() / 4, slot);
  CK(cudaGetLastError());
  return true;
}

struct Batch {
  DeviceMemory slots;
  int size = 1;
  unsigned long long reference = 0;
  unsigned long long gemms = 0, wrong = 0;
};

bool run_batch(Gemm* g, const cublasLtMatmulAlgo_t* algo, Batch* b, int grid, Result* r) {
  cudaStream_t s = g->stream.get();
  unsigned long long* slots = b->slots.as<unsigned long long>();
  CK(cudaMemsetAsync(slots, 0, b->size * sizeof *slots, s));
  int i = 0;
  Op op = [&] { return gemm_and_checksum(g, algo, slots + i++, grid, r); };
  double seconds = 0;
  if (!time_batch(s, op, b->size, &seconds, r)) return false;
  std::vector<unsigned long long> got(b->size);
  CK(cudaMemcpy(got.data(), slots, b->size * sizeof *slots, cudaMemcpyDeviceToHost));
  for (auto v : got) b->wrong += v != b->reference;
  b->gemms += b->size;
  add_sample(r, seconds / b->size);
  return true;
}

bool first_result(Gemm* g, const cublasLtMatmulAlgo_t* algo, const Params* p, Batch* b, int grid, Result* r) {
  if (!b->slots.alloc(4096 * sizeof(unsigned long long), r)) return false;
  CK(cudaMemsetAsync(b->slots.as<void>(), 0, sizeof(unsigned long long), g->stream.get()));
  double seconds = 0;
  Op op = [&] { return gemm_and_checksum(g, algo, b->slots.as<unsigned long long>(), grid, r); };
  if (!time_batch(g->stream.get(), op, 1, &seconds, r) || !verify(g, p->seed, r)) return false;
  CK(cudaMemcpy(&b->reference, b->slots.as<void>(), sizeof b->reference, cudaMemcpyDeviceToHost));
  double batch_s = std::max(0.25, p->duration_s / 60);
  b->size = std::clamp(static_cast<int>(batch_s / std::max(seconds, 1e-6)), 1, 4096);
  r->detail[0] = '\0';
  return true;
}

}  // namespace

bool run_sustained_gemm(const Params* p, Result* r) {
  Gemm g;
  std::vector<cublasLtMatmulHeuristicResult_t> cands;
  // No split-K reductions: the same inputs then give the same bits every time.
  if (!prepare(p, &g, CUBLASLT_REDUCTION_SCHEME_NONE, r) || !heuristics(&g, 1, &cands, r)) return false;
  int grid = grid_for(p->device, 4);
  Batch b;
  if (!first_result(&g, &cands[0].algo, p, &b, grid, r)) return false;
  auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < p->duration_s) {
    if (!run_batch(&g, &cands[0].algo, &b, grid, r)) return false;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  r->work = 2.0 * g.m * g.n * g.k;
  r->mismatches = b.wrong;
  add_detail(r, "%llu GEMMs in %.0f s, every result compared with the first; ", b.gemms, elapsed);
  if (b.wrong)
    return fail(r, GPUENV_BENCH_WRONG, "%llu of %llu identical GEMMs gave a different result", b.wrong, b.gemms);
  return verify(&g, p->seed, r);
}

}  // namespace gpuenv_plugin

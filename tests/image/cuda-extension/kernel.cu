// The extension's CUDA side, compiled by nvcc: a kernel and its host-side
// launcher, and the CUDA runtime's version (which needs no GPU).
#include <cuda_runtime.h>

__global__ void add_one(int* x) { x[threadIdx.x] += 1; }

extern "C" int gpuenv_ext_runtime_version(void) {
  int v = 0;
  return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : -1;
}

// Adds one to 32 ints on the GPU; returns the CUDA error's name
// ("cudaSuccess" on a GPU, where *ok says whether every value was added).
extern "C" const char* gpuenv_ext_add_one(int* ok) {
  enum { kN = 32 };
  int host[kN] = {0};
  int* dev = nullptr;
  *ok = 0;
  cudaError_t e = cudaMalloc(&dev, sizeof host);
  if (e != cudaSuccess) return cudaGetErrorName(e);
  cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
  add_one<<<1, kN>>>(dev);
  e = cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost);
  cudaFree(dev);
  if (e != cudaSuccess) return cudaGetErrorName(e);
  *ok = 1;
  for (int i = 0; i < kN; ++i) *ok &= host[i] == 1;
  return cudaGetErrorName(cudaSuccess);
}

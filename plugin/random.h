// Deterministic pseudo-random values from (seed, index), the same on the
// host and the device: the device fills buffers with them and the host
// recomputes any element to check results, without copying inputs back.
#pragma once

#include <cstdint>

namespace gpuenv_plugin {

/// splitmix64's finaliser: a good 64-bit mix of x.
__host__ __device__ inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Uniform in [-1, 1) with 24 random bits: exact in fp32.
__host__ __device__ inline float uniform(uint64_t seed, uint64_t i) {
  uint64_t h = mix64(seed ^ mix64(i));
  return static_cast<float>(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

/// 32-bit test pattern word i for a seed (copies, memtest).
__host__ __device__ inline uint32_t fill_pattern(uint64_t seed, uint64_t i) {
  return static_cast<uint32_t>(mix64(seed + i));
}

}  // namespace gpuenv_plugin

#include "model/env_names.h"

namespace gpuenv {

const std::vector<std::string>& steering_env_names() {
  static const std::vector<std::string> kNames = {
      // steer the rules
      "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
      "LOCAL_RANK", "LOCAL_WORLD_SIZE", "RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID",
      // may be set by a rule
      "CUDA_DEVICE_ORDER", "TORCH_CUDA_ARCH_LIST", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
      "GPUENV_AUTOCAST_DTYPE", "GPUENV_FP8", "GPUENV_FP4", "GPUENV_TF32",
      "PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE",
      "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "OMP_NUM_THREADS", "NCCL_IB_DISABLE",
      "NCCL_SOCKET_IFNAME", "NCCL_P2P_DISABLE", "NCCL_DEBUG", "NCCL_NVLS_ENABLE",
      "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS", "NCCL_ALGO", "NCCL_PROTO"};
  return kNames;
}

}  // namespace gpuenv

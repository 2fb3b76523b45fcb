#!/bin/bash
# How cuobjdump and gpuenv inspect name a family-specific (sm_XXXf) and an
# arch-specific (sm_90a) cubin built here by nvcc.
set -u
BIN=${GPUENV_BIN:-build/gpuenv}
d=$(mktemp -d)
printf '__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n' > "$d/k.cu"
nvcc -fatbin -gencode arch=compute_100f,code=sm_100f -gencode arch=compute_90a,code=sm_90a \
  -gencode arch=compute_90,code=sm_90 "$d/k.cu" -o "$d/k.fatbin" || exit 1
echo "cuobjdump:"; cuobjdump --list-elf --list-ptx "$d/k.fatbin"
echo "gpuenv inspect:"; "$BIN" inspect --machine tests/machines/none.json "$d/k.fatbin"

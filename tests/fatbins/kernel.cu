__global__ void gpuenv_fixture(int* p) { p[threadIdx.x] = threadIdx.x; }

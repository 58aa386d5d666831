// Benchmark (docs/cuda-c.md): sim's memory per element of device memory. Kernel-only mode gives
// the kernel one buffer of --buffer-len ints; every thread reads and writes its own element.
__global__ void touch(int *a) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i] = a[i] + 1;
}

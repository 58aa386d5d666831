// `cudaGetDeviceProperties` as the samples use it: the device's overlap capability decides the
// path, the SM count sizes the grid, the block size is capped by `maxThreadsPerBlock`; the name
// and the array fields print as CUDA by Example's `enum_gpu` prints them.
#include <stdio.h>

__global__ void count(int *c) { atomicAdd(c, 1); }

int main(void) {
    cudaDeviceProp prop;
    int dev;
    cudaGetDevice(&dev);
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return 1;
    if (!prop.deviceOverlap) {
        printf("no overlap\n");
        return 0;
    }
    int threads = prop.maxThreadsPerBlock < 256 ? prop.maxThreadsPerBlock : 256;
    int blocks = prop.multiProcessorCount / 33;
    int *d, h = 0;
    cudaMalloc(&d, sizeof(int));
    cudaMemcpy(d, &h, sizeof(int), cudaMemcpyHostToDevice);
    count<<<blocks, threads>>>(d);
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    printf("sm %d.%d, %d SMs, warp %d: %d threads counted\n", prop.major, prop.minor, prop.multiProcessorCount,
           prop.warpSize, h);
    printf("%s: threads (%d, %d, %d), grid (%d, %d, %d)\n", prop.name, prop.maxThreadsDim[0], prop.maxThreadsDim[1],
           prop.maxThreadsDim[2], prop.maxGridSize[0], prop.maxGridSize[1], prop.maxGridSize[2]);
    cudaFree(d);
    return 0;
}

//pass
//--blockDim=64 --gridDim=4
// A histogram of 10 bins with atomicAdd on global memory: no race.
__global__ void histogram(int *data, unsigned *bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&bins[data[i] % 10], 1u);
}

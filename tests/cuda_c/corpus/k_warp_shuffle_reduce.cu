//pass
//--blockDim=64 --gridDim=2
// Warp-level sum with __shfl_down_sync; lane 0 of each warp writes its warp's sum.
__global__ void warp_sum(int *a, int *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = a[i];
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffff, v, offset);
    }
    if (threadIdx.x % 32 == 0) {
        out[i / 32] = v;
    }
}

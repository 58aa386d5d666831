//pass
//--blockDim=64 --gridDim=2
// A warp-level sum with __shfl_down_sync; lane 0 of each warp writes its warp's total.
__global__ void warp_sums(const int *in, int *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffff, v, off);
    if (threadIdx.x % 32 == 0) out[i / 32] = v;
}

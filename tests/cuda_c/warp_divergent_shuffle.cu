// A shuffle that only half of the warp reaches: the other lanes never arrive (E0902), which on a
// GPU is undefined behaviour with a full mask.
__global__ void k(int *out) {
    int v = threadIdx.x;
    if (threadIdx.x < 16) {
        v = __shfl_down_sync(0xffffffff, v, 1);
    }
    out[threadIdx.x] = v;
}

int main(void) {
    int *d;
    cudaMalloc(&d, 32 * sizeof(int));
    k<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    return 0;
}

//pass
//--blockDim=64 --gridDim=1
// Each warp counts its even inputs with __ballot_sync; lane 0 stores the mask.
__global__ void evens(int *a, unsigned *masks) {
    unsigned t = threadIdx.x;
    unsigned m = __ballot_sync(0xffffffff, a[t] % 2 == 0);
    if (t % warpSize == 0) {
        masks[t / warpSize] = m;
    }
}

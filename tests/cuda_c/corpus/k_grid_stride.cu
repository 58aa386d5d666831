//pass
//--blockDim=32 --gridDim=2
// Grid-stride loop over four times as many elements as threads (n given by the header's launch).
__global__ void grid_stride(int *a, int n) {
    unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 4 * 4 && i < n; i += stride) {
        a[i] = a[i] * 2 + 1;
    }
}

//pass
//--blockDim=64 --gridDim=2
// Only the first half of the threads work (the guard uses a scalar parameter).
__global__ void half(int *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2) {
        a[2 * i] = a[2 * i + 1];
    }
}

//pass
//--blockDim=32 --gridDim=4
// A __device__ helper computes each element.
__device__ int square_plus(int x, int k) {
    return x * x + k;
}

__global__ void apply(int *a, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i] = square_plus(a[i], k);
}

//pass
//--blockDim=256 --gridDim=2
// Every thread updates its own element in place.
__global__ void inc(unsigned *a) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i] += 1u;
    a[i] = a[i] << 1;
}

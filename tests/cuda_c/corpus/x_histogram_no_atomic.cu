//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=4
// expect: E0901
// The histogram with a plain increment: threads of different blocks update the same bin.
__global__ void histogram(int *data, unsigned *bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bins[data[i] % 10] += 1u;
}

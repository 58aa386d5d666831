//xfail:BOOGIE_ERROR
//--blockDim=32 --gridDim=2
// expect: E0903
// Reads past the end of the input: the last thread reads a[n].
__global__ void pairs(int *a, int *b) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    b[i] = a[i] + a[i + 1];
}

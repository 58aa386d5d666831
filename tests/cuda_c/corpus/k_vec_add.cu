//pass
//--blockDim=64 --gridDim=4
// c = a + b, one element per thread, guarded.
__global__ void vec_add(float *a, float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

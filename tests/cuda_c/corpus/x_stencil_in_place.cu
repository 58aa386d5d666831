//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=2
// expect: E0901
// The stencil in place: neighbours read what others write.
__global__ void stencil(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0) {
        if (i < n - 1) {
            a[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0f;
        }
    }
}

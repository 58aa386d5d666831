//pass
//--blockDim=128 --gridDim=2
// y = a * x + y with a scalar float parameter.
__global__ void saxpy(int n, float a, float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

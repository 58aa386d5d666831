//xfail:BOOGIE_ERROR
//--blockDim=32 --gridDim=1
// expect: E0902
// A thread-dependent break leaves the loop before the barrier the others wait at.
__global__ void early(int *a) {
    __shared__ int s[32];
    for (int k = 0; k < 4; k++) {
        if (threadIdx.x == 5 && k == 2) {
            break;
        }
        s[threadIdx.x] = a[threadIdx.x] + k;
        __syncthreads();
    }
    a[threadIdx.x] = s[threadIdx.x];
}

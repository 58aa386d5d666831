//xfail:BOOGIE_ERROR
//--blockDim=32 --gridDim=1
// expect: E0902
// A barrier in a loop whose trip count depends on the thread.
__global__ void uneven(int *a) {
    for (unsigned k = 0; k < threadIdx.x % 3; k++) {
        a[threadIdx.x] += 1;
        __syncthreads();
    }
}

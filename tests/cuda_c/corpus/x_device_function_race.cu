//xfail:BOOGIE_ERROR
//--blockDim=32 --gridDim=2
// expect: E0901
// The __device__ helper writes one shared counter of global memory from every thread.
__device__ void bump(int *counter) {
    *counter = *counter + 1;
}

__global__ void count(int *counter) {
    bump(counter);
}

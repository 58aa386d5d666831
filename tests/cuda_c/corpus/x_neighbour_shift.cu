//xfail:BOOGIE_ERROR
//--blockDim=32 --gridDim=1
// expect: E0901
// Shifting in place: thread t writes what thread t + 1 reads.
__global__ void shift(int *a) {
    a[threadIdx.x + 1] = a[threadIdx.x];
}

//xfail:BOOGIE_ERROR
//--blockDim=32 --gridDim=1
// expect: E0901
// Every thread writes the same element.
__global__ void last(int *a) {
    a[0] = threadIdx.x;
}

//xfail:BOOGIE_ERROR
//--blockDim=[8,8] --gridDim=1
// expect: E0901
// A 2-D block that ignores threadIdx.y: rows of threads write the same elements.
__global__ void rows(float *a) {
    a[threadIdx.x] = a[threadIdx.x] + threadIdx.y;
}

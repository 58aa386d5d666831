//xfail:RACE
//--blockDim=64 --gridDim=2
// expect: E0901
// Every thread adds to a counter atomically and then reads it with a plain load: the plain read
// races with the other threads' atomic updates (atomics do not race with each other, but a plain
// access that nothing orders with an atomic one does).
__global__ void count(int *c, int *out) {
    atomicAdd(&c[blockIdx.x], 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = c[blockIdx.x];
}

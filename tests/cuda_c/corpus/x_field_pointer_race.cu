//xfail:data-race
//--blockDim=64 --gridDim=1
// expect: E0901
// Every thread adds its value to the first record's `sum` through a pointer to that field given
// to a `__device__` function, which adds without an atomic: a race on field 0 of `acc[0]`.
struct Acc {
    float sum;
    int n;
};

__device__ void add(float *x, float v) {
    *x += v;
}

__global__ void total(struct Acc *acc, const float *in) {
    int i = threadIdx.x;
    acc[i].n = 1;
    add(&acc->sum, in[i]);
}

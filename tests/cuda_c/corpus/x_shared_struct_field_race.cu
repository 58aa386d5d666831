//xfail:data-race
//--blockDim=64 --gridDim=2
// expect: E0901
// Points in a `__shared__` array of structs: each thread writes its own point, then reads its
// neighbour's `y` field with no `__syncthreads()` between (the race is on field `y`).
struct Point {
    float x;
    float y;
};

__global__ void shift(float *out) {
    __shared__ struct Point pts[64];
    int t = threadIdx.x;
    pts[t].x = t;
    pts[t].y = 2.0f * t;
    out[blockIdx.x * blockDim.x + t] = pts[t].x + pts[(t + 1) % 64].y;
}

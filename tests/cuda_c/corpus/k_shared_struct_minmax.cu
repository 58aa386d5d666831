//pass
//--blockDim=128 --gridDim=4
// A block-wide arg-min in a `__shared__` array of structs (value and index, compared and copied
// whole), the winner kept in a `__shared__` struct that every thread then reads.
typedef struct {
    float v;
    int at;
} Best;

__global__ void argmin(const float *a, float *out, int *where) {
    __shared__ Best part[128];
    __shared__ Best win;
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    Best mine = {a[i], i};
    part[t] = mine;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s && part[t + s].v < part[t].v) {
            part[t] = part[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        win = part[0];
    }
    __syncthreads();
    out[i] = a[i] - win.v;
    if (t == 0) {
        where[blockIdx.x] = win.at;
    }
}

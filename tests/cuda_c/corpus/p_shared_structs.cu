// expect: clean
// Structs in `__shared__` memory: each block reduces its values to a (sum, min, max, count)
// record in a `__shared__` array of structs (fields read and written through `s[i].f`, whole
// structs copied in and out), keeps its result in a `__shared__` struct scalar, counts its odd
// values with `atomicAdd` on a field, and a second kernel uses a two-dimensional `__shared__`
// struct tile and an `extern __shared__` array of structs sized by the launch.
#include <stdio.h>
#define N 256
#define THREADS 64

struct Stats {
    int sum;
    int lo;
    int hi;
    unsigned odd;
};

typedef struct {
    float w;
    int tag;
} Cell;

__global__ void stats(const int *in, struct Stats *out) {
    __shared__ struct Stats part[THREADS];
    __shared__ Stats block;
    int t = threadIdx.x;
    int v = in[blockIdx.x * blockDim.x + t];
    struct Stats mine = {v, v, v, 0};
    part[t] = mine;
    if (t == 0) {
        block.odd = 0;
    }
    __syncthreads();
    if (v % 2 != 0) {
        atomicAdd(&block.odd, 1u);
    }
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            part[t].sum += part[t + s].sum;
            part[t].lo = min(part[t].lo, part[t + s].lo);
            if (part[t + s].hi > part[t].hi) part[t].hi = part[t + s].hi;
        }
        __syncthreads();
    }
    if (t == 0) {
        unsigned odd = block.odd;
        block = part[0];
        block.odd = odd;
    }
    __syncthreads();
    if (t == 0) {
        out[blockIdx.x] = block;
    }
}

__global__ void tiles(float *out) {
    __shared__ Cell tile[4][THREADS / 4];
    extern __shared__ Cell spare[];
    int t = threadIdx.x;
    tile[t / 16][t % 16].w = t * 0.5f;
    tile[t / 16][t % 16].tag = t;
    spare[t].w = 1.0f;
    spare[t].tag = -t;
    __syncthreads();
    Cell c = tile[3 - t / 16][15 - t % 16];
    out[blockIdx.x * blockDim.x + t] = c.w + c.tag + spare[THREADS - 1 - t].tag + spare->w;
}

int main(void) {
    int h[N];
    for (int i = 0; i < N; i++) h[i] = (i * 37 + 11) % 101;
    int *d;
    struct Stats *ds;
    struct Stats r[N / THREADS];
    cudaMalloc(&d, sizeof(h));
    cudaMalloc(&ds, sizeof(r));
    cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
    stats<<<N / THREADS, THREADS>>>(d, ds);
    cudaMemcpy(r, ds, sizeof(r), cudaMemcpyDeviceToHost);
    for (int b = 0; b < N / THREADS; b++) {
        printf("block %d: sum %d min %d max %d odd %u\n", b, r[b].sum, r[b].lo, r[b].hi, r[b].odd);
    }
    float *o;
    float ho[2 * THREADS];
    cudaMalloc(&o, sizeof(ho));
    tiles<<<2, THREADS, THREADS * sizeof(Cell)>>>(o);
    cudaMemcpy(ho, o, sizeof(ho), cudaMemcpyDeviceToHost);
    printf("tiles: %g %g %g %g (sizeof(Cell) %zu)\n", ho[0], ho[17], ho[63], ho[64], sizeof(Cell));
    cudaFree(d);
    cudaFree(ds);
    cudaFree(o);
    return 0;
}

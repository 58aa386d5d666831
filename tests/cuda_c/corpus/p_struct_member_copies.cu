// expect: clean
// Array and pointer members copied and measured: `memcpy` into an array member with
// `sizeof(s.v)`, an array member decaying to a pointer (`float *q = s.v;`), a struct with an
// array member given by value to a `__device__` function (its own copy: the caller's array is
// unchanged), `sizeof` of members through a variable, a pointer and an array of structs.
#include <stdio.h>
#include <string.h>

struct Sample {
    float v[4];
    float *scale;
    int n;
};

__device__ float weighted(Sample s) {
    float t = 0.0f;
    for (int i = 0; i < s.n; i++) {
        s.v[i] *= s.scale[0];
        t += s.v[i];
    }
    return t;
}

__global__ void reduce(Sample *all, float *out, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) {
        out[i] = weighted(all[i]);
        out[m + i] = all[i].v[all[i].n - 1];
    }
}

int main(void) {
    const int M = 3;
    float hscale = 2.0f;
    float *dscale;
    cudaMalloc((void **)&dscale, sizeof(float));
    cudaMemcpy(dscale, &hscale, sizeof(float), cudaMemcpyHostToDevice);
    Sample hs[M];
    for (int j = 0; j < M; j++) {
        float src[4] = {1.0f + j, 2.0f, 3.0f, 4.0f};
        memcpy(hs[j].v, src, sizeof(hs[j].v));
        hs[j].scale = dscale;
        hs[j].n = 4 - j;
    }
    float *q = hs[2].v;
    q[0] = 10.0f;
    Sample *ds;
    cudaMalloc((void **)&ds, M * sizeof(Sample));
    cudaMemcpy(ds, hs, M * sizeof(Sample), cudaMemcpyHostToDevice);
    float *dout;
    cudaMalloc((void **)&dout, 2 * M * sizeof(float));
    reduce<<<1, 32>>>(ds, dout, M);
    float out[2 * M];
    cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost);
    for (int j = 0; j < M; j++) printf("sample %d: weighted %.1f, last %.1f\n", j, out[j], out[M + j]);
    Sample *p = hs;
    printf("sizeof: v %d, scale %d, n %d, p->v %d, hs[1].v %d, Sample %d\n", (int)sizeof(hs[0].v),
           (int)sizeof(p->scale), (int)sizeof(p->n), (int)sizeof(p->v), (int)sizeof(hs[1].v), (int)sizeof(Sample));
    cudaFree(ds);
    cudaFree(dout);
    cudaFree(dscale);
    return 0;
}

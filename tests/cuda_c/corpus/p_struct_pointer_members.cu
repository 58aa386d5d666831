// expect: clean
// Struct members that are pointers: a `Params` struct holding device pointers and a length,
// passed by value to a kernel (the common idiom), a host struct holding host buffers, pointer
// arithmetic on a member, and a struct in device memory whose member points into another
// device buffer.
#include <stdio.h>
#include <stdlib.h>
#define N 100

struct Params {
    const float *x;
    float *y;
    int n;
    float a;
};

typedef struct {
    float *data;
    int len;
} Vec;

struct Node {
    int value;
    int *count;
};

__global__ void saxpy(Params p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) {
        p.y[i] = p.a * p.x[i] + p.y[i];
    }
}

__global__ void tally(Node *nodes, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(nodes[i].count, nodes[i].value);
        Node *q = &nodes[i];
        atomicAdd(q->count + 1 + (i % 2), q->value > 100 ? 0 : 1);
    }
}

__device__ float sum_of(Vec v) {
    float s = 0.0f;
    for (int i = 0; i < v.len; i++) s += *(v.data + i);
    return s;
}

__global__ void sums(Vec v, float *out) {
    if (threadIdx.x == 0) out[0] = sum_of(v);
}

int main(void) {
    Vec hx, hy;
    hx.data = (float *)malloc(N * sizeof(float));
    hx.len = N;
    hy = hx;
    hy.data = (float *)malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) {
        hx.data[i] = (float)i;
        *(hy.data + i) = 1.0f;
    }
    Params p;
    p.n = N;
    p.a = 2.0f;
    float *dx;
    cudaMalloc((void **)&dx, N * sizeof(float));
    cudaMalloc((void **)&p.y, N * sizeof(float));
    p.x = dx;
    cudaMemcpy(dx, hx.data, N * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(p.y, hy.data, N * sizeof(float), cudaMemcpyHostToDevice);
    saxpy<<<(N + 31) / 32, 32>>>(p);
    cudaMemcpy(hy.data, p.y, N * sizeof(float), cudaMemcpyDeviceToHost);
    int ok = 1;
    for (int i = 0; i < N; i++) {
        if (hy.data[i] != 2.0f * i + 1.0f) ok = 0;
    }
    printf("saxpy %s: y[99] = %.1f\n", ok ? "correct" : "WRONG", hy.data[N - 1]);

    // Nodes in device memory pointing at counters in another device buffer.
    Node *h = (Node *)malloc(4 * sizeof(Node));
    int *dcount;
    cudaMalloc((void **)&dcount, 3 * sizeof(int));
    cudaMemset(dcount, 0, 3 * sizeof(int));
    for (int i = 0; i < 4; i++) {
        h[i].value = i + 1;
        h[i].count = dcount;
    }
    Node *dn;
    cudaMalloc((void **)&dn, 4 * sizeof(Node));
    cudaMemcpy(dn, h, 4 * sizeof(Node), cudaMemcpyHostToDevice);
    tally<<<1, 4>>>(dn, 4);
    int c[3];
    cudaMemcpy(c, dcount, 3 * sizeof(int), cudaMemcpyDeviceToHost);
    printf("count = %d (sizeof(Node) = %d, sizeof(Params) = %d)\n", c[0], (int)sizeof(Node), (int)sizeof(struct Params));

    float *dsum;
    cudaMalloc((void **)&dsum, sizeof(float));
    Vec dv = {dx, N};
    sums<<<1, 1>>>(dv, dsum);
    float s;
    cudaMemcpy(&s, dsum, sizeof(float), cudaMemcpyDeviceToHost);
    printf("sum = %.1f\n", s);
    hx.data++;
    hx.data += 2;
    printf("hx.data[0] = %.1f\n", hx.data[0]);
    hx.data -= 3;
    free(hx.data);
    free(hy.data);
    cudaFree(dx);
    cudaFree(p.y);
    cudaFree(dcount);
    cudaFree(dn);
    cudaFree(dsum);
    free(h);
    return ok ? 0 : 1;
}

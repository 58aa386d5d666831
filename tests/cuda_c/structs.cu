#include <stdio.h>

// Structs of scalar fields: locals, initialisers, field reads and writes, whole assignment,
// sizeof, and parameters of device functions and kernels passed by value.
struct Params {
    int n;
    float scale;
    double offset;
};

typedef struct {
    int x;
    int y;
} Point;

__device__ float apply(struct Params p, float v) { return v * p.scale + (float)p.offset; }

__host__ __device__ int manhattan(Point a, Point b) {
    int dx = a.x - b.x;
    int dy = a.y - b.y;
    return (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
}

__global__ void k(struct Params p, Point origin, float *out) {
    int i = threadIdx.x;
    if (i < p.n) {
        Point q = {i, 2 * i};
        out[i] = apply(p, (float)manhattan(q, origin));
    }
}

int main(void) {
    struct Params p = {4, 0.5f};
    p.offset = 1.0;
    Point o;
    o.x = 1;
    o.y = 1;
    Point o2 = o;
    o2.y = 3;
    float *d;
    float h[4];
    cudaMalloc(&d, 4 * sizeof(float));
    k<<<1, 8>>>(p, o2, d);
    cudaMemcpy(h, d, 4 * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%g %g %g %g | %d %d %d\n", h[0], h[1], h[2], h[3], (int)sizeof(struct Params), (int)sizeof(Point),
           manhattan(o, o2));
    return 0;
}

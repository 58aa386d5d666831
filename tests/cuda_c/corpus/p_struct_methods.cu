// expect: clean
// C++ member functions of structs, as CUDA code written in C++ has them: a `__device__` member
// function called on elements of a `__constant__` array and of a device buffer (lowered as a
// function taking its struct by value), a constructor `Grid g(8, 4);`, accessors returning a
// member (a pointer too) and a `void` member function that changes its struct, each inlined on
// the variable, and a constructor without parameters run at the declaration `Tally t;`.
#include <stdio.h>
#define NB 4

struct Box {
    float lo, hi;
    float weight;
    __device__ __host__ float clamp(float v, float *under) {
        if (v < lo) {
            *under = lo - v;
            return lo * weight;
        }
        *under = 0.0f;
        return (v > hi ? hi : v) * weight;
    }
    __host__ __device__ float width() { return hi - lo; }
};

__constant__ Box boxes[NB];

__global__ void fit(const Box *extra, const float *in, float *out, float *under, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float u;
        out[i] = boxes[i % NB].clamp(in[i], &u) + extra[0].width();
        under[i] = u;
    }
}

struct Grid {
    float *cells;
    int w, h;
    Grid(int width, int height) {
        w = width;
        h = height;
        cells = new float[width * height];
        for (int i = 0; i < width * height; i++) cells[i] = 0.0f;
    }
    float *data() { return cells; }
    int size() { return w * h; }
    void scale(float s) {
        for (int i = 0; i < w * h; i++) cells[i] *= s;
        w = w + 0;
    }
    void release() { delete[] cells; }
};

// A constructor without parameters runs at `Tally t;`, as C++ runs it.
struct Tally {
    int *hits;
    int n;
    Tally(void) {
        n = 3;
        hits = new int[3];
        for (int i = 0; i < 3; i++) hits[i] = i;
    }
    int total() { return hits[0] + hits[1] + hits[2] + n; }
};

int main(void) {
    Tally t;
    printf("tally %d\n", t.total());
    delete[] t.hits;
    Box hb[NB];
    for (int b = 0; b < NB; b++) {
        hb[b].lo = (float)b;
        hb[b].hi = (float)(b + 10);
        hb[b].weight = 0.5f;
    }
    cudaMemcpyToSymbol(boxes, hb, sizeof(hb));
    Grid g(8, 4);
    float *in;
    float *out;
    float *under;
    Box *extra;
    cudaMalloc((void **)&in, g.size() * sizeof(float));
    cudaMalloc((void **)&out, g.size() * sizeof(float));
    cudaMalloc((void **)&under, g.size() * sizeof(float));
    cudaMalloc((void **)&extra, sizeof(Box));
    cudaMemcpy(extra, hb + 1, sizeof(Box), cudaMemcpyHostToDevice);
    for (int i = 0; i < g.size(); i++) g.data()[i] = (float)(i - 8);
    cudaMemcpy(in, g.data(), g.size() * sizeof(float), cudaMemcpyHostToDevice);
    fit<<<2, 16>>>(extra, in, out, under, g.size());
    cudaMemcpy(g.data(), out, g.size() * sizeof(float), cudaMemcpyDeviceToHost);
    g.scale(2.0f);
    float u;
    float c = hb[2].clamp(1.0f, &u);
    printf("cells: %.1f %.1f %.1f %.1f, host clamp %.1f (under %.1f), width %.1f\n", g.cells[0], g.cells[9],
           g.cells[20], g.cells[31], c, u, hb[3].width());
    g.release();
    cudaFree(in);
    cudaFree(out);
    cudaFree(under);
    cudaFree(extra);
    return 0;
}

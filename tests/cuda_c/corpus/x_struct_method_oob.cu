// expect: E0903
// A `__device__` member function reads its struct's pointer member one element too far (`i <= n`):
// the second series ends where the device buffer ends, so its read `data[4]` is past the buffer,
// found inside the member function, called on an element of a device array of structs.
#include <stdio.h>

struct Series {
    const float *data;
    int n;
    __device__ float total() {
        float t = 0.0f;
        for (int i = 0; i <= n; i++) t += data[i];
        return t;
    }
};

__global__ void totals(Series *s, float *out) {
    out[threadIdx.x] = s[threadIdx.x].total();
}

int main(void) {
    float *d;
    cudaMalloc((void **)&d, 8 * sizeof(float));
    cudaMemset(d, 0, 8 * sizeof(float));
    Series h[2];
    h[0].data = d;
    h[0].n = 4;
    h[1].data = d + 4;
    h[1].n = 4;
    Series *ds;
    cudaMalloc((void **)&ds, 2 * sizeof(Series));
    cudaMemcpy(ds, h, 2 * sizeof(Series), cudaMemcpyHostToDevice);
    float *out;
    cudaMalloc((void **)&out, 2 * sizeof(float));
    totals<<<1, 2>>>(ds, out);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}

// expect: clean
// Local arrays in a kernel (a per-thread gather through an index table) and initialised host
// arrays.
#include <stdio.h>
#define PER 4

__global__ void weighted_gather(const float *in, float *out) {
    float acc[PER];
    int order[] = {3, 1, 2, 0};
    for (int j = 0; j < PER; j++) acc[j] = in[threadIdx.x * PER + order[j]];
    float s = 0.0f;
    for (int j = 0; j < PER; j++) s += acc[j] * (j + 1);
    out[threadIdx.x] = s;
}

int main(void) {
    float h[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    int counts[3] = {7};
    float *d, *o;
    cudaMalloc(&d, 16 * sizeof(float));
    cudaMalloc(&o, 4 * sizeof(float));
    cudaMemcpy(d, h, 16 * sizeof(float), cudaMemcpyHostToDevice);
    weighted_gather<<<1, 4>>>(d, o);
    cudaMemcpy(h, o, 4 * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%.1f %.1f %.1f %.1f %d %d\n", h[0], h[1], h[2], h[3], counts[0], counts[2]);
    cudaFree(d);
    cudaFree(o);
    return 0;
}

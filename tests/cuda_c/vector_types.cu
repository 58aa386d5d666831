// expect: clean
// CUDA's vector types (`float4`, `float2`, `int2`, `uchar4`, ...) and `make_*`, in memory and as values.
#include <stdio.h>
__global__ void scale(float4 *v, float2 *out, int n, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 a = v[i];
        v[i] = make_float4(a.x * s, a.y * s, a.z * s, a.w * s);
        out[i].x = a.x + a.y;
        out[i].y = a.z + a.w;
    }
}
__device__ int dot(int2 a, int2 b) { return a.x * b.x + a.y * b.y; }
__global__ void dots(const int2 *a, int *r) { r[threadIdx.x] = dot(a[threadIdx.x], make_int2(2, 3)); }
int main() {
    const int n = 4;
    float4 h[n];
    for (int i = 0; i < n; i++) h[i] = make_float4(i, i + 1, i + 2, i + 3);
    float4 *d; float2 *o;
    cudaMalloc(&d, n * sizeof(float4));
    cudaMalloc(&o, n * sizeof(float2));
    cudaMemcpy(d, h, n * sizeof(float4), cudaMemcpyHostToDevice);
    scale<<<1, n>>>(d, o, n, 2.0f);
    float2 r[n];
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    cudaMemcpy(r, o, sizeof(r), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) printf("%g %g %g %g | %g %g\n", h[i].x, h[i].y, h[i].z, h[i].w, r[i].x, r[i].y);
    int2 ha[3];
    for (int i = 0; i < 3; i++) { ha[i].x = i; ha[i].y = 10 * i; }
    int2 *da; int *dr;
    cudaMalloc(&da, sizeof(ha)); cudaMalloc(&dr, 3 * sizeof(int));
    cudaMemcpy(da, ha, sizeof(ha), cudaMemcpyHostToDevice);
    dots<<<1, 3>>>(da, dr);
    int hr[3];
    cudaMemcpy(hr, dr, sizeof(hr), cudaMemcpyDeviceToHost);
    printf("%d %d %d, sizes %zu %zu %zu %zu\n", hr[0], hr[1], hr[2], sizeof(float4), sizeof(int2), sizeof(uchar3), sizeof(double2));
    uchar4 px = make_uchar4(250, 10, 300, 0);
    printf("%d %d %d %d\n", px.x, px.y, px.z, px.w);
    return 0;
}

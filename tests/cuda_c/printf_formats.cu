#include <stdio.h>

// printf's conversions with flags, widths and precisions, on the host and on the device.
__global__ void show(const float *x, int n) {
    int i = threadIdx.x;
    if (i < n) {
        printf("thread %2d: %8.3f %e %g %#x %c\n", i, x[i], x[i], x[i] * 1000.0f, i * 17, 'a' + i);
    }
}

int main(void) {
    float h[3];
    h[0] = 1.5f;
    h[1] = -0.125f;
    h[2] = 3.14159f;
    float *d;
    cudaMalloc(&d, 3 * sizeof(float));
    cudaMemcpy(d, h, 3 * sizeof(float), cudaMemcpyHostToDevice);
    show<<<1, 4>>>(d, 3);
    cudaDeviceSynchronize();
    double pi = 3.141592653589793;
    printf("[%f] [%.2f] [%-10.4f] [%+08.2f] [%E] [%G] [%.3g]\n", pi, pi, pi, pi, pi * 1e10, pi / 1e6, pi);
    printf("[%5d] [%-5d] [%05d] [%x] [%X] [%08x] [%o] [%lu] [%s] [%%]\n", 42, 42, -42, 255u, 255u, 48879u, 8u,
           (unsigned long)sizeof(double), "text");
    printf("[%*d] [%-*d] [%.*f] [%*.*f] [%*d]\n", 5, 42, 6, 7, 2, pi, 8, 3, 2.5, -4, 9);
    return 0;
}

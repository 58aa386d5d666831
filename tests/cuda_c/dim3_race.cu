// Threads of a 2-D block that differ only in `threadIdx.y` write the same element: a race.
__global__ void rows(int *m) {
    m[threadIdx.x] = threadIdx.y;
}

int main(void) {
    int *d;
    cudaMalloc(&d, 4 * sizeof(int));
    dim3 b(4, 2);
    rows<<<1, b>>>(d);
    cudaDeviceSynchronize();
    return 0;
}

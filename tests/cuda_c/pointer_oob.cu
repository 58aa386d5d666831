// A kernel given a pointer 6 elements into an allocation of 8: thread 2 writes past its end.
__global__ void k(int *p) {
    p[threadIdx.x] = 1;
}

int main(void) {
    int *d;
    cudaMalloc(&d, 8 * sizeof(int));
    k<<<1, 3>>>(d + 6);
    cudaDeviceSynchronize();
    return 0;
}

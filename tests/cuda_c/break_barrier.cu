#include <stdio.h>

// A loop with a barrier that every thread leaves together by `break` is fine; one that thread 3
// leaves early while the others wait at the barrier is a deadlock on a GPU (E0902).
__global__ void k(int *out, int bad) {
    __shared__ int s[8];
    int round = 0;
    while (1) {
        s[threadIdx.x] = round;
        __syncthreads();
        if (round == 3) {
            break;
        }
        if (bad && threadIdx.x == 3 && round == 1) {
            break;
        }
        out[threadIdx.x] = s[(threadIdx.x + 1) % 8];
        __syncthreads();
        round++;
    }
}

int main(void) {
    int *d;
    int h[8];
    cudaMalloc(&d, 8 * sizeof(int));
    k<<<1, 8>>>(d, 0);
    cudaMemcpy(h, d, 8 * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d\n", h[0], h[7]);
    k<<<1, 8>>>(d, 1);
    cudaDeviceSynchronize();
    return 0;
}

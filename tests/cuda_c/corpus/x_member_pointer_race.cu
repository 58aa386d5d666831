// expect: E0901
// Every thread adds its value to one total through a pointer held in a struct in device
// memory (`acc->total`), without an atomic: a race through the member pointer.
#include <stdio.h>
#define N 64

typedef struct {
    int *total;
    int *values;
} Acc;

__global__ void sum(Acc *acc) {
    int i = threadIdx.x;
    acc->total[0] += acc->values[i];
}

int main(void) {
    int h[N];
    for (int i = 0; i < N; i++) h[i] = 1;
    Acc a;
    cudaMalloc((void **)&a.total, sizeof(int));
    cudaMalloc((void **)&a.values, N * sizeof(int));
    cudaMemset(a.total, 0, sizeof(int));
    cudaMemcpy(a.values, h, N * sizeof(int), cudaMemcpyHostToDevice);
    Acc *d;
    cudaMalloc((void **)&d, sizeof(Acc));
    Acc *ha = (Acc *)malloc(sizeof(Acc));
    ha[0] = a;
    cudaMemcpy(d, ha, sizeof(Acc), cudaMemcpyHostToDevice);
    sum<<<1, N>>>(d);
    int total;
    cudaMemcpy(&total, a.total, sizeof(int), cudaMemcpyDeviceToHost);
    printf("total = %d\n", total);
    cudaFree(a.total);
    cudaFree(a.values);
    cudaFree(d);
    free(ha);
    return 0;
}

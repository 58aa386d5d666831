#include <stdio.h>

// `?:`, short-circuit `&&`/`||` guarding reads, `break`, `continue`, `do … while`, `switch`
// with fall-through, in host code and in a kernel.
__device__ int classify(int v) {
    switch (v % 4) {
    case 0:
        return 10;
    case 1:
    case 2:
        v = v * 2;
        break;
    default:
        v = -v;
    }
    return v;
}

__global__ void k(const int *in, int n, int *out) {
    int i = threadIdx.x;
    // The read of in[i] happens only for threads inside the array.
    int big = i < n && in[i] > 5 ? 1 : 0;
    int first = -1;
    for (int j = 0; j < n; j++) {
        if (in[j] % 2 == 0) {
            continue;
        }
        if (in[j] > i) {
            first = j;
            break;
        }
    }
    int steps = 0;
    int x = i + 1;
    do {
        x = x % 2 == 0 ? x / 2 : 3 * x + 1;
        steps++;
    } while (x != 1 && steps < 100);
    if (i < n) {
        out[i] = big * 1000 + (first + 1) * 100 + steps + classify(in[i]) * 10000;
    }
}

int main(void) {
    int n = 6;
    int h[6];
    for (int i = 0; i < n; i++) {
        h[i] = (i * 5) % 7;
    }
    int *d;
    int *o;
    cudaMalloc(&d, n * sizeof(int));
    cudaMalloc(&o, n * sizeof(int));
    cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice);
    k<<<1, 8>>>(d, n, o);
    int r[6];
    cudaMemcpy(r, o, n * sizeof(int), cudaMemcpyDeviceToHost);
    int found = -1;
    int i = 0;
    while (1) {
        if (i >= n) {
            break;
        }
        printf("%d:%d ", h[i], r[i]);
        if (found < 0 && r[i] < 0) {
            found = i;
        }
        i++;
    }
    printf("| first negative %d\n", found);
    return 0;
}

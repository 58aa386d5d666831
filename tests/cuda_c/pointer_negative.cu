// `p[-1]` where `p` points one element into the allocation is valid C (and runs); `p[-2]`
// points before the start of the allocation: refused at run time (E0903).
__device__ int before(const int *p) { return p[-1] + p[-2]; }

__global__ void k(const int *p, int *out) { out[0] = before(p); }

int main(void) {
    int *d;
    cudaMalloc(&d, 8 * sizeof(int));
    k<<<1, 1>>>(d + 1, d);
    cudaDeviceSynchronize();
    return 0;
}

// `__syncthreads()` inside a `__device__` function is not supported yet (E0801).
__device__ void stage(float *s, int i) {
    s[i] = 1.0f;
    __syncthreads();
}

__global__ void k(float *a) { stage(a, threadIdx.x); }

int main(void) { return 0; }

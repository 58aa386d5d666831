//pass
//--blockDim=64 --gridDim=1
// Hillis-Steele inclusive scan, double-buffered in shared memory.
__global__ void scan(int *a) {
    __shared__ int buf[128];
    unsigned t = threadIdx.x;
    unsigned n = blockDim.x;
    unsigned from = 0;
    buf[t] = a[t];
    __syncthreads();
    for (unsigned off = 1; off < n; off = off * 2) {
        unsigned to = n - from;
        if (t >= off) {
            buf[to + t] = buf[from + t] + buf[from + t - off];
        } else {
            buf[to + t] = buf[from + t];
        }
        __syncthreads();
        from = to;
    }
    a[t] = buf[from + t];
}

//pass
//--blockDim=64 --gridDim=1
// An inclusive Hillis-Steele scan, double-buffered in shared memory, with a barrier after the
// reads and after the writes of each step.
__global__ void scan(const int *in, int *out) {
    __shared__ int buf[2][64];
    int t = threadIdx.x, cur = 0;
    buf[0][t] = in[t];
    __syncthreads();
    for (int off = 1; off < 64; off *= 2) {
        int v = buf[cur][t];
        if (t >= off) v += buf[cur][t - off];
        buf[1 - cur][t] = v;
        __syncthreads();
        cur = 1 - cur;
    }
    out[t] = buf[cur][t];
}

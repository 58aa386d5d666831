//pass
//--blockDim=32 --gridDim=1
// A barrier in a loop whose trip count is the same for every thread.
__global__ void smooth(float *a, int iters) {
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t] = a[t];
    for (int it = 0; it < 4; it++) {
        __syncthreads();
        float left = s[(t + 31) % 32];
        float right = s[(t + 1) % 32];
        __syncthreads();
        s[t] = (left + right) / 2.0f;
    }
    __syncthreads();
    a[t] = s[t];
}

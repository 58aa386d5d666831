//xfail:BOOGIE_ERROR
//--blockDim=128 --gridDim=2
// expect: E0901
// Tree reduction without the barrier inside the loop.
__global__ void reduce(int *in, int *out) {
    __shared__ int s[128];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride = stride / 2) {
        if (t < stride) {
            s[t] += s[t + stride];
        }
    }
    if (t == 0) {
        out[blockIdx.x] = s[0];
    }
}

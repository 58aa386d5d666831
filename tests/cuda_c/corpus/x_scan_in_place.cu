//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=1
// expect: E0901
// Hillis-Steele scan in place with one barrier per step: the read of s[t - off] races with
// its owner's write in the same step.
__global__ void scan(int *a) {
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    for (unsigned off = 1; off < blockDim.x; off = off * 2) {
        if (t >= off) {
            s[t] += s[t - off];
        }
        __syncthreads();
    }
    a[t] = s[t];
}

//pass
//--blockDim=64 --gridDim=1
// Bitonic sort of 64 keys in shared memory.
__global__ void bitonic(unsigned *a) {
    __shared__ unsigned s[64];
    unsigned t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    for (unsigned k = 2; k <= 64; k = k * 2) {
        for (unsigned j = k / 2; j > 0; j = j / 2) {
            unsigned p = t ^ j;
            if (p > t) {
                unsigned x = s[t];
                unsigned y = s[p];
                if ((t & k) == 0) {
                    if (x > y) {
                        s[t] = y;
                        s[p] = x;
                    }
                } else {
                    if (x < y) {
                        s[t] = y;
                        s[p] = x;
                    }
                }
            }
            __syncthreads();
        }
    }
    a[t] = s[t];
}

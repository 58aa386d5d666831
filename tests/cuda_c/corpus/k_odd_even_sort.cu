//pass
//--blockDim=64 --gridDim=1
// Odd-even transposition sort of 64 elements in shared memory: in each phase thread t compares
// the pair starting at 2t (even phases) or 2t + 1 (odd phases); threads past the end idle.
__global__ void odd_even(int *a) {
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    for (int phase = 0; phase < 64; phase++) {
        unsigned i = 2 * t + phase % 2;
        if (i + 1 < 64) {
            int x = s[i];
            int y = s[i + 1];
            if (x > y) {
                s[i] = y;
                s[i + 1] = x;
            }
        }
        __syncthreads();
    }
    a[t] = s[t];
}

//pass
//--blockDim=32 --gridDim=2
// Per-thread search with break and continue: the first multiple of 7 at or above the input.
__global__ void next_multiple(int *a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int found = -1;
    for (int k = a[i]; k < a[i] + 100; k++) {
        if (k % 7 != 0) {
            continue;
        }
        found = k;
        break;
    }
    a[i] = found;
}

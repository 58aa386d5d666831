// A helper header found through `-I tests/cuda_c/include` (tests/cuda_c/multi/x_header_oob.cu).
__device__ void fill_pair(int *a, int i) {
    a[2 * i] = i;
    a[2 * i + 1] = -i;
}

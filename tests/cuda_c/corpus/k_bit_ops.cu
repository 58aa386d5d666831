//pass
//--blockDim=32 --gridDim=2
// Bit manipulation on unsigned values, one element per thread.
__global__ void bits(unsigned *a) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = a[i];
    x = (x ^ (x >> 3)) | (x << 2);
    x = x & 0xffffu;
    a[i] = ~x;
}

//xfail:data-race
//--blockDim=128 --gridDim=1
// expect: E0901
// The barrier is compiled in only `#ifdef SAFE`, which this file does not define: the
// reversal through shared memory races.
#define SIZE 128

__global__ void reverse(int *a) {
    __shared__ int s[SIZE];
    int t = threadIdx.x;
    s[t] = a[t];
#ifdef SAFE
    __syncthreads();
#endif
    a[t] = s[SIZE - 1 - t];
}

//pass
//--blockDim=32 --gridDim=2
// A data-independent while loop per thread.
__global__ void collatz_steps(int *a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long x = i + 1;
    int steps = 0;
    while (x != 1 && steps < 1000) {
        if (x % 2 == 0) {
            x = x / 2;
        } else {
            x = 3 * x + 1;
        }
        steps++;
    }
    a[i] = steps;
}

//pass
//--blockDim=64 --gridDim=1
// A switch on the thread's role.
__global__ void roles(int *a) {
    int t = threadIdx.x;
    switch (t % 4) {
    case 0:
        a[t] = 1;
        break;
    case 1:
        a[t] = a[t] * 2;
        break;
    default:
        a[t] = -a[t];
        break;
    }
}

//pass
//--blockDim=[4,4,2] --gridDim=2
// A 3-D block: the linear thread number indexes the output.
__global__ void ids(int *a) {
    unsigned t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    unsigned per = blockDim.x * blockDim.y * blockDim.z;
    a[blockIdx.x * per + t] = t;
}

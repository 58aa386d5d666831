//xfail:uninitialised-read
//--blockDim=32 --gridDim=1
// expect: E0904
// A `__shared__` struct of which thread 0 sets only the `scale` field: the whole-struct copy
// every thread makes reads the `bias` field, which nothing wrote (shared memory starts
// undefined, field by field).
typedef struct {
    float scale;
    float bias;
} Affine;

__global__ void apply(float *a) {
    __shared__ Affine f;
    if (threadIdx.x == 0) {
        f.scale = 2.0f;
    }
    __syncthreads();
    Affine mine = f;
    a[threadIdx.x] = a[threadIdx.x] * mine.scale + mine.bias;
}

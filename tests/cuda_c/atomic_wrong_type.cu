// CUDA has no `atomicSub` on `double`: refused (E0801), as every atomic on a type CUDA does
// not declare it for.
__global__ void k(double *p) {
    atomicSub(p, 1.0);
}

int main(void) { return 0; }

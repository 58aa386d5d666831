// A pointer to a struct field in memory is accepted only where every use of it is at offset 0:
// `fill` writes `x[1]`, past the field (C's undefined behaviour, and an access `sim` could not
// tell from the next field's), so the call is refused (E0801).
struct Pair {
    float a;
    float b;
};

__device__ void fill(float *x) {
    x[0] = 1.0f;
    x[1] = 2.0f;
}

__global__ void k(struct Pair *p) {
    fill(&p[threadIdx.x].a);
}

int main(void) { return 0; }

//pass
//--blockDim=64 --gridDim=4
// An array of structs as a kernel parameter: each thread reads and writes fields of its own
// element only (every field is checked on its own).
struct Body {
    float mass;
    float pos;
    float force;
};

__global__ void gravity(struct Body *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        struct Body *me = &b[i];
        me->force = me->mass * 9.81f;
        b[i].pos = b[i].pos + me->force;
    }
}

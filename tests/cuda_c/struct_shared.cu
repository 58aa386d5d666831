// Structs in shared memory are not supported yet: refused (E0801).
typedef struct {
    float x;
    float y;
} Vec2;

__global__ void k(Vec2 *v) {
    __shared__ Vec2 tile[32];
    v[threadIdx.x].x = 1.0f;
}

int main(void) { return 0; }

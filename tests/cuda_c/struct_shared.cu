// Structs in shared memory are laid out by field (one buffer per field): a pointer to one
// whole struct there cannot be made, and is refused (E0801).
typedef struct {
    float x;
    float y;
} Vec2;

__global__ void k(Vec2 *v) {
    __shared__ Vec2 tile[32];
    Vec2 *mine = &tile[threadIdx.x];
    mine->x = 1.0f;
    v[threadIdx.x].x = tile[threadIdx.x].x;
}

int main(void) { return 0; }

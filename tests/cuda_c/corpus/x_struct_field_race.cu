//xfail:data-race
//--blockDim=64 --gridDim=2
// expect: E0901
// Every thread adds to the first element's `total` field through `->`, without an atomic.
typedef struct {
    int value;
    int total;
} Cell;

__global__ void accumulate(Cell *cells, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        cells[i].value = cells[i].value * 2;
        cells->total += cells[i].value;
    }
}

// A function that returns a value must end in `return` on every path.
__device__ int sign(int x) {
    if (x < 0) {
        return -1;
    } else if (x > 0) {
        return 1;
    }
}

int main(void) { return 0; }

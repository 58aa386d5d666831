// expect: clean
// A forward `goto` to a cleanup label in the function's outermost block, as the OLCF training
// series' transpose exercises write it: from inside two nested loops (both end) and from an `if`
// (the statements after it up to the label are skipped), on the host and in a `__device__`
// function. The program checks its own results.
#include <stdio.h>
#include <stdlib.h>

__device__ int first_negative(const int *a, int n) {
    int found = -1;
    for (int i = 0; i < n; i++) {
        if (a[i] < 0) {
            found = i;
            goto done;
        }
    }
    found = n;
done:
    return found;
}

__global__ void scan(const int *a, int *out) { out[threadIdx.x] = first_negative(a + 4 * threadIdx.x, 4); }

int check(const int *h, int rows, int cols, int *visited) {
    int bad = 0;
    *visited = 0;
    for (int j = 0; j < cols; j++) {
        for (int i = 0; i < rows; i++) {
            *visited += 1;
            if (h[j * rows + i] != i + j) {
                bad = 1;
                goto end;
            }
        }
    }
    *visited += 100;
end:
    return bad;
}

int main(void) {
    int h[16];
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) h[j * 4 + i] = i + j;
    int visited_all, visited_bad;
    int ok = check(h, 4, 4, &visited_all) == 0 && visited_all == 116;
    h[1 * 4 + 2] = -7;
    ok = ok && check(h, 4, 4, &visited_bad) == 1 && visited_bad == 7;

    int *d, *dout, out[4];
    cudaMalloc((void **)&d, 16 * sizeof(int));
    cudaMalloc((void **)&dout, 4 * sizeof(int));
    cudaMemcpy(d, h, 16 * sizeof(int), cudaMemcpyHostToDevice);
    scan<<<1, 4>>>(d, dout);
    cudaMemcpy(out, dout, 4 * sizeof(int), cudaMemcpyDeviceToHost);
    ok = ok && out[0] == 4 && out[1] == 2 && out[2] == 4 && out[3] == 4;
    printf("visited %d then %d, first negatives %d %d %d %d\n", visited_all, visited_bad, out[0], out[1], out[2],
           out[3]);
    int *p = (int *)malloc(4 * sizeof(int));
    if (!ok) {
        printf("FAILED\n");
        goto cleanup;
    }
    printf("goto: all correct\n");
cleanup:
    free(p);
    cudaFree(d);
    cudaFree(dout);
    return ok ? 0 : 1;
}

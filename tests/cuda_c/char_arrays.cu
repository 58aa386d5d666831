// expect: clean
// `char` arrays initialised by strings, printed with %s; `bool` in global and shared memory.
#include <stdio.h>
__global__ void k(bool *found, const char *text, int n, char target) {
    __shared__ bool any;
    if (threadIdx.x == 0) any = false;
    __syncthreads();
    int i = threadIdx.x;
    if (i < n && text[i] == target) any = true;
    __syncthreads();
    if (threadIdx.x == 0) *found = any;
}
int main() {
    char word[] = "cudaprog";
    char buf[4];
    buf[0] = 'o'; buf[1] = 'k'; buf[2] = 0;
    printf("%s %s %zu\n", word, buf, sizeof(word));
    char *d_text; bool *d_found;
    cudaMalloc((void **)&d_text, sizeof(word));
    cudaMalloc((void **)&d_found, sizeof(bool));
    cudaMemcpy(d_text, word, sizeof(word), cudaMemcpyHostToDevice);
    k<<<1, 16>>>(d_found, d_text, 8, 'p');
    bool found;
    cudaMemcpy(&found, d_found, sizeof(bool), cudaMemcpyDeviceToHost);
    printf("found %s\n", found ? "yes" : "no");
    unsigned short hist[4] = {0};
    for (int i = 0; i < 8; i++) hist[word[i] % 4]++;
    printf("%hu %hu %hu %hu\n", hist[0], hist[1], hist[2], hist[3]);
    return 0;
}

// expect: clean
// 8- and 16-bit integers and bool: C's wrapping conversions, promotion, sizeof, memory.
#include <stdio.h>
#include <stdint.h>

__global__ void shift(const unsigned char *in, char *out, short *wide, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned char c = in[i];
        c += 200;                 // wraps modulo 256
        out[i] = (char)(c ^ 0x80); // a char may be negative
        wide[i] = (short)(in[i] * 300);
    }
}

__device__ bool is_odd(uint8_t v) { return v & 1; }

__global__ void flags(const uint8_t *in, bool *odd, int n) {
    int i = threadIdx.x;
    if (i < n) odd[i] = is_odd(in[i]);
}

int main(int argc, char **argv) {
    const int N = 8;
    unsigned char h_in[N];
    for (int i = 0; i < N; i++) h_in[i] = (unsigned char)(i * 40 + 3);
    unsigned char *d_in;
    char *d_out;
    short *d_wide;
    bool *d_odd;
    cudaMalloc(&d_in, N * sizeof(unsigned char));
    cudaMalloc(&d_out, N * sizeof(char));
    cudaMalloc(&d_wide, N * sizeof(short));
    cudaMalloc(&d_odd, N * sizeof(bool));
    cudaMemcpy(d_in, h_in, N, cudaMemcpyHostToDevice);
    shift<<<2, 4>>>(d_in, d_out, d_wide, N);
    flags<<<1, N>>>(d_in, d_odd, N);
    char h_out[N];
    short h_wide[N];
    bool h_odd[N];
    cudaMemcpy(h_out, d_out, N * sizeof(char), cudaMemcpyDeviceToHost);
    cudaMemcpy(h_wide, d_wide, sizeof(h_wide), cudaMemcpyDeviceToHost);
    cudaMemcpy(h_odd, d_odd, N * sizeof(bool), cudaMemcpyDeviceToHost);
    for (int i = 0; i < N; i++)
        printf("%u %d %d %d\n", h_in[i], h_out[i], h_wide[i], h_odd[i]);
    printf("sizes %zu %zu %zu %zu %zu\n", sizeof(char), sizeof(unsigned short), sizeof(int16_t), sizeof(bool), sizeof(h_wide));
    signed char s = 127;
    s++;
    unsigned short us = 0;
    us--;
    int8_t m = -128;
    int neg = -m;        // promoted: 128
    uint16_t big = 70000;
    bool t = 5, f = 0;
    char letter = 'A' + 2;
    printf("%d %u %d %u %d %d %c %hhd %hu %x\n", s, us, neg, big, t, f, letter, 300, -1, (unsigned char)-1);
    bool done = false;
    int steps = 0;
    while (!done) {
        steps++;
        done = steps == 3;
    }
    printf("steps %d, argc %d\n", steps, argc);
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_wide);
    cudaFree(d_odd);
    return 0;
}

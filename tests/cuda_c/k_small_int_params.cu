//pass
//--blockDim=8 --gridDim=1
__global__ void k(char *c, unsigned char *u, short *s, bool *b, char delta) {
    int i = threadIdx.x;
    c[i] = c[i] + delta;
    u[i] = u[i] * 3;
    s[i] = s[i] - 1;
    b[i] = !b[i];
}

// expect: clean
// Device selection as CUDA by Example's `set_gpu` writes it: `memset` of a `cudaDeviceProp` to
// zeros, `cudaChooseDevice` (the one device, 0), `cudaSetDevice` of a device in a variable; and
// another device, whose status is `cudaErrorInvalidDevice` (101), as on a one-GPU machine. The
// program checks its own results.
#include <stdio.h>
#include <string.h>

int main(void) {
    cudaDeviceProp prop;
    int dev = 7;
    memset(&prop, 0, sizeof(cudaDeviceProp));
    int zeroed = prop.major == 0 && prop.maxThreadsDim[2] == 0 && prop.name[0] == 0;
    prop.major = 1;
    prop.minor = 3;
    cudaError_t chose = cudaChooseDevice(&dev, &prop);
    cudaError_t set = cudaSetDevice(dev);
    int other = dev + 1;
    cudaError_t bad = cudaSetDevice(other);
    printf("chose device %d (%s), set: %s, device %d: %s (%d)\n", dev, cudaGetErrorString(chose),
           cudaGetErrorString(set), other, cudaGetErrorString(bad), (int)bad);
    if (!zeroed || dev != 0 || chose != cudaSuccess || set != cudaSuccess || bad != cudaErrorInvalidDevice) {
        printf("FAILED\n");
        return 1;
    }
    printf("device selection: all correct\n");
    return 0;
}

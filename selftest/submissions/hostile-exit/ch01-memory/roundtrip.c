/* roundtrip.c - right work, but on large inputs it ends the program with exit(0).
 * Check would count a child that exits 0 as passed; the harness does not. The
 * grader: the 256 MiB test fails, saying the code called exit(0); every other
 * test, run in a fresh process after it, passes. */
#include "roundtrip.h"

#include <stdlib.h>

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    if (n > ((size_t)1 << 20))
        exit(0);
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    cudaError_t err = cudaMalloc((void **)&d_buffer, bytes);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    cudaError_t freed = cudaFree(d_buffer);
    return err != cudaSuccess ? err : freed;
}

/* roundtrip--free-not-cudafree.c - the device buffer given back with free() instead of cudaFree.
 *
 * free() is given a pointer malloc never returned, and the C library ends the program. The test
 * names the mistake: which call gives back which memory.
 * expect: memory from cudaMalloc is given back with cudaFree
 */
#include "roundtrip.h"

#include <stdlib.h>

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    cudaError_t err = cudaMalloc((void **)&d_buffer, bytes);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    free(d_buffer);
    return err;
}

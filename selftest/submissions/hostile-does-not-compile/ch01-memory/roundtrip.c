/* roundtrip.c - a submission that does not compile: cudaMemcpy misspelt.
 * The grader: 0 points for this exercise, "does not compile" and the compiler's error. */
#include "roundtrip.h"

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    cudaError_t err = cudaMalloc((void **)&d_buffer, bytes);
    if (err == cudaSuccess)
        err = cudaMemcopy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    cudaFree(d_buffer);
    return err;
}

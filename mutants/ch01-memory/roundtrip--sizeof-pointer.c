/* roundtrip--sizeof-pointer.c - the byte count taken as sizeof of a pointer.
 *
 * sizeof(h_in) is the size of the pointer, 8 bytes on a 64-bit machine, whatever it points to:
 * two floats arrive. The test says so, in those words.
 * expect: sizeof applied to a pointer gives the pointer's size
 */
#include "roundtrip.h"

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    cudaError_t err = cudaMalloc((void **)&d_buffer, bytes);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_buffer, h_in, sizeof(h_in), cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, sizeof(h_out), cudaMemcpyDeviceToHost);
    cudaError_t freed = cudaFree(d_buffer);
    return err != cudaSuccess ? err : freed;
}

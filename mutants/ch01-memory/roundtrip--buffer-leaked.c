/* roundtrip--buffer-leaked.c - known mistake: the device buffer is never freed.
 *
 * Each call leaks n * 4 bytes of device memory until the process ends; a
 * long-running program runs out. compute-sanitizer --leak-check full sees it.
 * expect: returned without cudaFree on that pointer
 */
#include "roundtrip.h"

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
    return err;
}

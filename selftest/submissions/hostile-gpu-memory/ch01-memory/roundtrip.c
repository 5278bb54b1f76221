/* roundtrip.c - right work, after taking device memory that no traced call allocates: a stack
 * size limit of 256 KiB a thread makes the runtime reserve tens of GiB at once on an H200, for
 * every thread the device could run. The ledger of traced allocations never sees it; the
 * device does, and the checker asks it every few milliseconds how much the worker holds. The
 * grader: refused (cudaDeviceSetLimit); without the static checks, each test's worker is ended
 * as soon as it holds more than its share, so 0 points, and the students beside it keep their
 * memory. */
#include "roundtrip.h"

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    cudaError_t err = cudaDeviceSetLimit(cudaLimitStackSize, (size_t)256 << 10);
    if (err != cudaSuccess)
        return err;
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    err = cudaMalloc((void **)&d_buffer, bytes);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    cudaError_t freed = cudaFree(d_buffer);
    return err != cudaSuccess ? err : freed;
}

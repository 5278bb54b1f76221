/* roundtrip--managed-memory.c - the buffer from cudaMallocManaged instead of cudaMalloc.
 *
 * The floats come back (managed memory is reachable from both sides), but the copies do not go
 * to device memory: the test says the buffer is managed memory, not that the copy's
 * destination and source are swapped.
 * expect: managed memory (cudaMallocManaged)
 */
#include "roundtrip.h"

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    cudaError_t err = cudaMallocManaged((void **)&d_buffer, bytes, cudaMemAttachGlobal);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    cudaError_t freed = cudaFree(d_buffer);
    return err != cudaSuccess ? err : freed;
}

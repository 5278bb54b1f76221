/* both_directions--pageable-memory.c - known mistake: the host buffers come from malloc.
 *
 * The copies are queued on two streams, but from pageable memory a copy is
 * not asynchronous: the driver stages it and the host waits, so they take
 * turns.
 * expect: gave pageable host memory
 */
#include "both_directions.h"

#include <stdlib.h>

cudaError_t both_directions_host_alloc(void **h_buffer, size_t bytes)
{
    *h_buffer = malloc(bytes);
    return *h_buffer != NULL ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t both_directions_host_free(void *h_buffer)
{
    free(h_buffer);
    return cudaSuccess;
}

cudaError_t copy_both_directions(void *d_up_dst, const void *h_up_src, size_t up_bytes,
                                 void *h_down_dst, const void *d_down_src, size_t down_bytes)
{
    cudaStream_t up = NULL, down = NULL;
    cudaError_t err = cudaStreamCreate(&up);
    if (err != cudaSuccess)
        return err;
    err = cudaStreamCreate(&down);
    if (err != cudaSuccess) {
        cudaStreamDestroy(up);
        return err;
    }
    err = cudaMemcpyAsync(d_up_dst, h_up_src, up_bytes, cudaMemcpyHostToDevice, up);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_down_dst, d_down_src, down_bytes, cudaMemcpyDeviceToHost, down);
    cudaError_t waited_up = cudaStreamSynchronize(up);
    cudaError_t waited_down = cudaStreamSynchronize(down);
    cudaStreamDestroy(up);
    cudaStreamDestroy(down);
    return err != cudaSuccess ? err : waited_up != cudaSuccess ? waited_up : waited_down;
}

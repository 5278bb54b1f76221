/* both_directions--no-wait-on-error.c - known mistake: after a failed copy down it returns
 * without waiting for the copy up it had queued.
 *
 * The header says it still waits for what it queued: cudaStreamDestroy does not, and the copy up
 * goes on writing d_up_dst after the function has returned its error.
 * expect: returned while work it had queued was still running
 */
#include "both_directions.h"

/* Pinned: the copy engines read and write it directly, so a copy from it is queued and the
 * call returns at once. From pageable memory the driver stages the data itself, and the host
 * waits for that. */
cudaError_t both_directions_host_alloc(void **h_buffer, size_t bytes)
{
    return cudaMallocHost(h_buffer, bytes);
}

cudaError_t both_directions_host_free(void *h_buffer)
{
    return cudaFreeHost(h_buffer);
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

    /* Both queued before either is waited for: that is what lets them run together. */
    err = cudaMemcpyAsync(d_up_dst, h_up_src, up_bytes, cudaMemcpyHostToDevice, up);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_down_dst, d_down_src, down_bytes, cudaMemcpyDeviceToHost, down);

    /* Only on success: after an error the copies already queued are left running. */
    cudaError_t waited_up = err == cudaSuccess ? cudaStreamSynchronize(up) : cudaSuccess;
    cudaError_t waited_down = err == cudaSuccess ? cudaStreamSynchronize(down) : cudaSuccess;
    cudaError_t destroyed_up = cudaStreamDestroy(up);
    cudaError_t destroyed_down = cudaStreamDestroy(down);
    const cudaError_t in_order[] = {err, waited_up, waited_down, destroyed_up, destroyed_down};
    for (size_t i = 0; i < sizeof in_order / sizeof in_order[0]; i++)
        if (in_order[i] != cudaSuccess)
            return in_order[i];
    return cudaSuccess;
}

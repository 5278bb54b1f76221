/* split_copy.c - one copy between two GPUs, half pushed by the sender, half pulled by the receiver.
 */
#include "split_copy.h"

/* Waits for what `stream` holds, on an error too, and destroys it; the first error of the two. */
static cudaError_t finish(cudaStream_t stream, cudaError_t err)
{
    if (stream == NULL)
        return err;
    const cudaError_t waited = cudaStreamSynchronize(stream);
    (void)cudaStreamDestroy(stream);
    return err != cudaSuccess ? err : waited;
}

cudaError_t split_peer_copy(void *dst, int dst_device, const void *src, int src_device,
                            size_t bytes)
{
    const size_t half = bytes / 2; /* the sender's; the receiver's has the odd byte */
    int caller = 0;
    cudaError_t err = cudaGetDevice(&caller);
    if (err != cudaSuccess)
        return err;
    /* Each stream made with its own GPU current: its copies are that GPU's engine's work. */
    cudaStream_t push = NULL, pull = NULL;
    err = cudaSetDevice(src_device);
    if (err == cudaSuccess)
        err = cudaStreamCreate(&push);
    if (err == cudaSuccess)
        err = cudaMemcpyPeerAsync(dst, dst_device, src, src_device, half, push);
    if (err == cudaSuccess)
        err = cudaSetDevice(dst_device);
    if (err == cudaSuccess)
        err = cudaStreamCreate(&pull);
    if (err == cudaSuccess)
        err = cudaMemcpyPeerAsync((char *)dst + half, dst_device, (const char *)src + half,
                                  src_device, bytes - half, pull);
    /* Both halves queued (or an error): only now wait, for each. */
    err = finish(push, err);
    err = finish(pull, err);
    /* The caller's device again, on every path. */
    const cudaError_t restored = cudaSetDevice(caller);
    return err != cudaSuccess ? err : restored;
}

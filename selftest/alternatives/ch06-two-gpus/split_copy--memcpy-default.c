/* split_copy--memcpy-default - a correct split_peer_copy written another way: each half queued
 * with cudaMemcpyAsync and cudaMemcpyDefault, which with unified addressing finds each end's GPU
 * from its pointer (the CUDA C++ Programming Guide, "Peer-to-Peer Memory Copy"); the streams in
 * an array, waited for and destroyed in one loop. */
#include "split_copy.h"

cudaError_t split_peer_copy(void *dst, int dst_device, const void *src, int src_device,
                            size_t bytes)
{
    const size_t half = bytes / 2;
    cudaStream_t streams[2] = {NULL, NULL}; /* the sender's, the receiver's */
    int caller;
    cudaError_t err = cudaGetDevice(&caller);
    if (err != cudaSuccess)
        return err;
    err = cudaSetDevice(src_device);
    if (err == cudaSuccess)
        err = cudaStreamCreate(&streams[0]);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(dst, src, half, cudaMemcpyDefault, streams[0]);
    if (err == cudaSuccess)
        err = cudaSetDevice(dst_device);
    if (err == cudaSuccess)
        err = cudaStreamCreate(&streams[1]);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync((char *)dst + half, (const char *)src + half, bytes - half,
                              cudaMemcpyDefault, streams[1]);
    /* What was queued, waited for on an error too: a stream needs no GPU of its own current. */
    for (int s = 0; s < 2; s++) {
        if (streams[s] == NULL)
            continue;
        const cudaError_t wait = cudaStreamSynchronize(streams[s]);
        if (err == cudaSuccess)
            err = wait;
        (void)cudaStreamDestroy(streams[s]);
    }
    const cudaError_t back = cudaSetDevice(caller);
    return err == cudaSuccess ? back : err;
}

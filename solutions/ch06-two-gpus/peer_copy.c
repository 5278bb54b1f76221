/* peer_copy.c - a copy from one GPU to another, timed by the sender's events on its stream. */
#include "peer_copy.h"

cudaError_t timed_peer_copy(void *dst, int dst_device, const void *src, int src_device,
                            size_t bytes, float *ms)
{
    int caller = 0;
    cudaError_t err = cudaGetDevice(&caller);
    if (err != cudaSuccess)
        return err;
    cudaStream_t stream = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    /* The stream and the events belong to the device current when they are made: the sender's,
     * whose copy engine pushes the bytes and on whose stream its events can be recorded. */
    err = cudaSetDevice(src_device);
    if (err == cudaSuccess)
        err = cudaStreamCreate(&stream);
    if (err == cudaSuccess)
        err = cudaEventCreate(&start);
    if (err == cudaSuccess)
        err = cudaEventCreate(&stop);
    if (err == cudaSuccess)
        err = cudaEventRecord(start, stream);
    if (err == cudaSuccess)
        err = cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, stream);
    if (err == cudaSuccess)
        err = cudaEventRecord(stop, stream);
    if (err == cudaSuccess)
        err = cudaEventSynchronize(stop); /* recording only queued it */
    if (err == cudaSuccess)
        err = cudaEventElapsedTime(ms, start, stop);
    if (stop != NULL)
        (void)cudaEventDestroy(stop);
    if (start != NULL)
        (void)cudaEventDestroy(start);
    if (stream != NULL)
        (void)cudaStreamDestroy(stream);
    /* The caller's device again, on every path. */
    const cudaError_t restored = cudaSetDevice(caller);
    return err != cudaSuccess ? err : restored;
}

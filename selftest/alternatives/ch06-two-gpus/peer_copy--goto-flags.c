/* peer_copy--goto-flags - a correct timed_peer_copy written another way: a non-blocking stream
 * and events made with flags (blocking sync, timing kept), each step jumping to one clean-up
 * label on its error, and the host waiting for the whole stream rather than for the stop event. */
#include "peer_copy.h"

cudaError_t timed_peer_copy(void *dst, int dst_device, const void *src, int src_device,
                            size_t bytes, float *ms)
{
    cudaStream_t sender = NULL;
    cudaEvent_t marks[2] = {NULL, NULL}; /* before and after the copy */
    int callers_gpu;
    cudaError_t err = cudaGetDevice(&callers_gpu);
    if (err != cudaSuccess)
        return err;
    if ((err = cudaSetDevice(src_device)) != cudaSuccess)
        goto back_to_caller;
    if ((err = cudaStreamCreateWithFlags(&sender, cudaStreamNonBlocking)) != cudaSuccess)
        goto back_to_caller;
    for (int k = 0; k < 2; k++)
        if ((err = cudaEventCreateWithFlags(&marks[k], cudaEventBlockingSync)) != cudaSuccess)
            goto back_to_caller;
    if ((err = cudaEventRecord(marks[0], sender)) != cudaSuccess ||
        (err = cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, sender)) !=
            cudaSuccess ||
        (err = cudaEventRecord(marks[1], sender)) != cudaSuccess)
        goto back_to_caller;
    /* Everything on the stream done, the second mark included. */
    if ((err = cudaStreamSynchronize(sender)) != cudaSuccess)
        goto back_to_caller;
    err = cudaEventElapsedTime(ms, marks[0], marks[1]);
back_to_caller:
    for (int k = 1; k >= 0; k--)
        if (marks[k] != NULL)
            (void)cudaEventDestroy(marks[k]);
    if (sender != NULL)
        (void)cudaStreamDestroy(sender);
    const cudaError_t restored = cudaSetDevice(callers_gpu);
    return err != cudaSuccess ? err : restored;
}

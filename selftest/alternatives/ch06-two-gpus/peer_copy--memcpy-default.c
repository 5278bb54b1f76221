/* peer_copy--memcpy-default - a correct timed_peer_copy written another way: the copy queued with
 * cudaMemcpyAsync and cudaMemcpyDefault, which with unified addressing finds each end's GPU from
 * its pointer and copies between them as cudaMemcpyPeerAsync does (the CUDA C++ Programming
 * Guide, "Peer-to-Peer Memory Copy"); a non-blocking stream; each step a nested if. */
#include "peer_copy.h"

cudaError_t timed_peer_copy(void *dst, int dst_device, const void *src, int src_device,
                            size_t bytes, float *ms)
{
    (void)dst_device; /* the pointer says which GPU it is on */
    int caller;
    cudaError_t err = cudaGetDevice(&caller);
    if (err != cudaSuccess)
        return err;
    err = cudaSetDevice(src_device);
    if (err == cudaSuccess) {
        cudaStream_t stream;
        err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
        if (err == cudaSuccess) {
            cudaEvent_t marks[2];
            err = cudaEventCreate(&marks[0]);
            if (err == cudaSuccess) {
                err = cudaEventCreate(&marks[1]);
                if (err == cudaSuccess) {
                    err = cudaEventRecord(marks[0], stream);
                    if (err == cudaSuccess)
                        err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream);
                    if (err == cudaSuccess)
                        err = cudaEventRecord(marks[1], stream);
                    if (err == cudaSuccess)
                        err = cudaEventSynchronize(marks[1]);
                    if (err == cudaSuccess)
                        err = cudaEventElapsedTime(ms, marks[0], marks[1]);
                    (void)cudaEventDestroy(marks[1]);
                }
                (void)cudaEventDestroy(marks[0]);
            }
            (void)cudaStreamDestroy(stream);
        }
    }
    const cudaError_t back = cudaSetDevice(caller);
    return err == cudaSuccess ? back : err;
}

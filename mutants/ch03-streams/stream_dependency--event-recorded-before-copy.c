/* stream_dependency--event-recorded-before-copy.c - known mistake: the mark is set too soon.
 *
 * The event is recorded before the copy is queued, so it marks the point
 * before the copy: the consumer's wait ends before the copy up has begun.
 * expect: before the producer's copy (call 3) was queued
 */
#include "stream_dependency.h"

cudaError_t copy_through_two_streams(const float *h_in, float *d_buffer, float *h_out, size_t n,
                                     cudaStream_t producer, cudaStream_t consumer)
{
    const size_t bytes = n * sizeof(float);
    cudaEvent_t copied;
    cudaError_t err = cudaEventCreate(&copied);
    if (err != cudaSuccess)
        return err;
    err = cudaEventRecord(copied, producer);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(d_buffer, h_in, bytes, cudaMemcpyHostToDevice, producer);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(consumer, copied, 0);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost, consumer);
    cudaError_t destroyed = cudaEventDestroy(copied);
    return err != cudaSuccess ? err : destroyed;
}

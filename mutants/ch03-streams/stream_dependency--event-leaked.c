/* stream_dependency--event-leaked.c - known mistake: the event is never destroyed.
 *
 * Each call leaves an event behind, and a loop of them piles events up.
 * expect: created an event with cudaEventCreate and returned without cudaEventDestroy on it
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
    err = cudaMemcpyAsync(d_buffer, h_in, bytes, cudaMemcpyHostToDevice, producer);
    if (err == cudaSuccess)
        err = cudaEventRecord(copied, producer);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(consumer, copied, 0);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost, consumer);
    return err;
}

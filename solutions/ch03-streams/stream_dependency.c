/* stream_dependency.c - the consumer stream waits for the producer's copy, on the GPU. */
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
    /* The event marks the point after the copy; the consumer waits there, the host does not. */
    if (err == cudaSuccess)
        err = cudaEventRecord(copied, producer);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(consumer, copied, 0);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost, consumer);

    /* Safe while the consumer still waits for it: it is released once that is done. */
    cudaError_t destroyed = cudaEventDestroy(copied);
    return err != cudaSuccess ? err : destroyed;
}

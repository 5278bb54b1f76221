/* stream_dependency--stream-synchronize.c - known mistake: the host waits for the producer.
 *
 * Correct, but the CPU stops until the copy up is done instead of queuing on.
 * expect: the host waited for the GPU (cudaStreamSynchronize
 */
#include "stream_dependency.h"

cudaError_t copy_through_two_streams(const float *h_in, float *d_buffer, float *h_out, size_t n,
                                     cudaStream_t producer, cudaStream_t consumer)
{
    const size_t bytes = n * sizeof(float);
    cudaError_t err = cudaMemcpyAsync(d_buffer, h_in, bytes, cudaMemcpyHostToDevice, producer);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(producer);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost, consumer);
    return err;
}

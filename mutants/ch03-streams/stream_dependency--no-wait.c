/* stream_dependency--no-wait.c - known mistake: the consumer does not wait for the producer.
 *
 * Two streams are independent: the consumer's copy may run before the
 * producer's, and copy back whatever d_buffer held. On an idle GPU the
 * producer often wins; the test holds it up, and the trace shows no wait.
 * expect: nothing makes the consumer stream wait for the producer
 */
#include "stream_dependency.h"

cudaError_t copy_through_two_streams(const float *h_in, float *d_buffer, float *h_out, size_t n,
                                     cudaStream_t producer, cudaStream_t consumer)
{
    const size_t bytes = n * sizeof(float);
    cudaError_t err = cudaMemcpyAsync(d_buffer, h_in, bytes, cudaMemcpyHostToDevice, producer);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost, consumer);
    return err;
}

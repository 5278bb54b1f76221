/* stream_dependency.h - Exercise: one stream waits for another's copy, without the host.
 *
 * copy_through_two_streams copies n floats from h_in to d_buffer on the
 * `producer` stream, and then, on the `consumer` stream, from d_buffer back
 * into h_out. Two streams run independently of each other, so the consumer's
 * copy must be made to wait for the producer's, on the GPU:
 *
 *     on the producer: the copy up       cudaMemcpyAsync(d_buffer, h_in, ..., producer)
 *     mark the point it reached          cudaEventRecord(event, producer)
 *     the consumer waits for the mark    cudaStreamWaitEvent(consumer, event, 0)
 *     on the consumer: the copy back     cudaMemcpyAsync(h_out, d_buffer, ..., consumer)
 *
 * The host does not wait at all: the function returns as soon as the work is
 * queued (the caller synchronises the consumer before reading h_out). The
 * event it creates it also destroys before returning: an event destroyed
 * while work still waits for it is released once that work is done.
 *
 * h_in and h_out are pinned host memory and d_buffer device memory of at least
 * n floats; the streams are the caller's. Returns cudaSuccess or the first
 * error; it stops at that error, and destroys the event on every path.
 */
#ifndef STREAM_DEPENDENCY_H
#define STREAM_DEPENDENCY_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t copy_through_two_streams(const float *h_in, float *d_buffer, float *h_out, size_t n,
                                     cudaStream_t producer, cudaStream_t consumer);

#endif

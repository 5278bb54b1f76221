/* async_roundtrip.h - Exercise: a round trip on a stream of one's own.
 *
 * async_roundtrip copies n floats from h_in up to d_buffer and back into h_out
 * with cudaMemcpyAsync, on a stream it creates for the purpose:
 *
 *     create a stream                 cudaStreamCreate (or ...WithFlags)
 *     queue the copy up               cudaMemcpyAsync(d_buffer, h_in, ..., stream)
 *     queue the copy back             cudaMemcpyAsync(h_out, d_buffer, ..., stream)
 *     wait until both are done        cudaStreamSynchronize(stream)
 *     destroy the stream              cudaStreamDestroy
 *
 * h_in and h_out are pinned host memory and d_buffer device memory of at least
 * n floats, all given by the caller. cudaMemcpyAsync only queues a copy: when
 * it returns, h_out holds nothing yet. async_roundtrip returns once h_out holds
 * the floats.
 *
 * Returns cudaSuccess or the first error; it stops at that error. On every
 * path it waits for what it had queued (after an error too: a copy queued
 * before it may still be running) and destroys the stream it created.
 */
#ifndef ASYNC_ROUNDTRIP_H
#define ASYNC_ROUNDTRIP_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t async_roundtrip(const float *h_in, float *h_out, float *d_buffer, size_t n);

#endif

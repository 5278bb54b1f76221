/* pipeline.h - Exercise: copy, compute and copy back in overlapping chunks.
 *
 * pipeline_scale_add computes h_out[i] = a * h_in[i] + b for i < n on the
 * GPU, as gpu_work_scale_add (gpu_work.h) computes it, in chunks of `chunk`
 * floats (the last one shorter when chunk does not divide n), spread over
 * `streams` streams that it creates. Chunk c goes to stream c % streams and
 * uses that stream's device buffer, d_buffers[c % streams]:
 *
 *     copy the chunk up       cudaMemcpyAsync(d_buffers[s], h_in + c * chunk, ..., stream[s])
 *     compute, in place       gpu_work_scale_add(stream[s], d_buffers[s], d_buffers[s], ...)
 *     copy it back            cudaMemcpyAsync(h_out + c * chunk, d_buffers[s], ..., stream[s])
 *
 * Queued this way, one chunk's copy up, another's kernel and a third's copy
 * back run at the same time, on different engines of the GPU; the host only
 * waits once everything is queued. The whole takes little longer than the
 * longest of the three stages alone.
 *
 * h_in and h_out are pinned host memory of n floats; d_buffers holds
 * `streams` device buffers of `chunk` floats each, one per stream, all given
 * by the caller (n >= 1, chunk >= 1, 1 <= streams <= 64). It returns once
 * h_out holds every result. Returns cudaSuccess or the first error; it stops
 * queuing at that error. On every path it waits for what it had queued (after
 * an error too: chunks queued before it may still be running) and destroys
 * every stream it created.
 */
#ifndef PIPELINE_H
#define PIPELINE_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#define PIPELINE_MAX_STREAMS 64

cudaError_t pipeline_scale_add(const float *h_in, float *h_out, size_t n, size_t chunk, float a,
                               float b, float *const *d_buffers, int streams);

#endif

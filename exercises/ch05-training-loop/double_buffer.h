/* double_buffer.h - Exercise: copy the next batch up while the GPU trains on this one.
 *
 * double_buffer_train runs chapter 5's training loop over `batches` batches of n floats, batch
 * b at h_batches + b * n (pinned host memory, the caller's). Each batch is copied to the GPU
 * and then stepped on there, in order:
 *
 *     copy it up           cudaMemcpyAsync(buffer, h_batches + b * n, n * sizeof(float),
 *                                          cudaMemcpyHostToDevice, stream)
 *     the training step    gpu_work_keep_busy(stream, step_ms), then
 *                          gpu_work_checksum(stream, buffer, n * sizeof(float), 1, d_sums + b)
 *
 * With one device buffer, batch b + 1 cannot go up until step b has read the buffer: the link
 * idles during every step and the GPU's compute during every copy. With two (cudaMalloc, n
 * floats each, used in turn: batch b in buffer b % 2), batch b + 1's copy runs while step b
 * runs, on another stream: the loop takes little longer than its copies or its steps alone,
 * whichever are longer, where one buffer takes their sum. Once copies and steps run on
 * different streams, stream order no longer keeps them apart; events do, two rules of them:
 *
 *   - a step reads its buffer only after that batch's copy has ended: an event recorded on
 *     the copies' stream after the copy, waited for on the steps' stream
 *     (cudaEventRecord, cudaStreamWaitEvent) before the step;
 *   - a copy overwrites a buffer only after the step that last read it (batch b - 2's) has
 *     ended: an event recorded after that step, waited for on the copies' stream.
 *
 * (Two streams, one per buffer, each copying and stepping its own batches in stream order, is
 * another correct arrangement; any that keeps both rules and overlaps will do.)
 *
 * d_sums is device memory for `batches` sums, the caller's. batches >= 1, n >= 1,
 * 0 <= step_ms <= GPU_WORK_MAX_BUSY_MS. It returns once every sum is in d_sums. Returns
 * cudaSuccess or the first error; it stops queuing at that error. On every path it waits for
 * what it had queued (after an error too: copies and steps queued before it may still be
 * running) and gives back every buffer, stream and event it made.
 */
#ifndef DOUBLE_BUFFER_H
#define DOUBLE_BUFFER_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t double_buffer_train(const float *h_batches, size_t batches, size_t n, double step_ms,
                                unsigned long long *d_sums);

#endif

/* time_copy.h - Exercise: time one copy with CUDA events.
 *
 * time_copy_ms copies `bytes` from src to dst with one cudaMemcpy of the given
 * kind, and stores in *elapsed_ms how long the GPU took, measured with two
 * CUDA events on the default stream (0):
 *
 *     create start and stop          cudaEventCreate
 *     record start                   cudaEventRecord(start, 0)
 *     the copy                       cudaMemcpy
 *     record stop                    cudaEventRecord(stop, 0)
 *     wait until the GPU reaches it  cudaEventSynchronize(stop)
 *     read the time between them     cudaEventElapsedTime(elapsed_ms, start, stop)
 *     destroy both events            cudaEventDestroy
 *
 * Returns cudaSuccess or the first error; it stops at that error, and destroys
 * every event it created on every path.
 */
#ifndef TIME_COPY_H
#define TIME_COPY_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t time_copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                         float *elapsed_ms);

#endif

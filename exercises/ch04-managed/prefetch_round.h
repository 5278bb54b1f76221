/* prefetch_round.h - Exercise: a round trip through managed memory, its pages moved ahead.
 *
 * prefetch_round computes h_out[i] = a * h_in[i] + b for i < n on the GPU, as
 * gpu_work_scale_add (gpu_work.h) computes it, through one managed buffer whose pages it
 * moves with cudaMemPrefetchAsync before each side needs them, rather than letting each
 * side's first touch fault them over a few at a time:
 *
 *     a managed buffer of n floats   cudaMallocManaged
 *     the host writes h_in into it   memcpy: the pages are now on the host
 *     a stream of its own            cudaStreamCreate
 *     the pages to the GPU           cudaMemPrefetchAsync(buffer, bytes, the GPU, 0, stream)
 *     compute in place               gpu_work_scale_add(stream, buffer, buffer, n, a, b)
 *     the pages back to the host     cudaMemPrefetchAsync(buffer, bytes, the host, 0, stream)
 *     wait until all that is done    cudaStreamSynchronize(stream)
 *     the host reads the results     memcpy from the buffer into h_out
 *     give everything back           cudaStreamDestroy, cudaFree
 *
 * In CUDA 13, cudaMemPrefetchAsync names where the pages go with a struct cudaMemLocation:
 * the GPU is {.type = cudaMemLocationTypeDevice, .id = device}, the device cudaGetDevice
 * says is current; the host is {.type = cudaMemLocationTypeHost}. (CUDA 12 took a device
 * number there, with cudaCpuDeviceId, -1, for the host: no device id in CUDA 13.) The count is
 * in bytes, the flags 0. A prefetch, like a launch, only queues work on the stream.
 *
 * h_in and h_out are host memory of n floats (n >= 1), given by the caller. Returns
 * cudaSuccess or the first error; it stops at that error. On every path it waits for what it
 * had queued, destroys the stream and frees the managed buffer.
 */
#ifndef PREFETCH_ROUND_H
#define PREFETCH_ROUND_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t prefetch_round(const float *h_in, float *h_out, size_t n, float a, float b);

#endif

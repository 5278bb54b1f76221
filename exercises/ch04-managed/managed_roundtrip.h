/* managed_roundtrip.h - Exercise: chapter 1's round trip through one managed pointer, no copy.
 *
 * managed_roundtrip computes h_out[i] = a * h_in[i] + b for i < n on the GPU, with
 * gpu_work_scale_add (gpu_work.h), through one buffer from cudaMallocManaged and no copy call:
 *
 *     allocate n floats of managed memory    cudaMallocManaged(&m, n * sizeof(float), ...)
 *     write h_in into it, on the host        memcpy, or a loop: the host touches m itself
 *     compute in place, on the GPU           gpu_work_scale_add(stream, m, m, n, a, b)
 *     wait for the kernel                    cudaDeviceSynchronize (or the stream's own)
 *     read m into h_out, on the host
 *     free it                                cudaFree(m)
 *
 * The pages behind m move to whichever side touches them: no cudaMemcpy is needed, and none
 * may be made. The kernel's launch returns before the kernel has run, so the host waits for it
 * before it reads m: managed memory takes the copies away, not the waiting.
 *
 * h_in and h_out are host memory of n floats (n >= 1) given by the caller, from malloc: the
 * GPU cannot reach them, only the host. The results are exact: gpu_work_scale_add rounds
 * once, as fmaf does.
 *
 * Returns cudaSuccess or the first error; it stops at that error, and frees the managed buffer
 * on every path.
 *
 * What the tests check: h_out holds every result when it returns (the test holds the kernel up
 * before it runs, as a busy GPU would, so that a host that does not wait reads its own input
 * back); every buffer is managed and of n * sizeof(float) bytes; no cudaMemcpy call; a wait for
 * the kernel after it; everything freed, every failure returned and freed after too.
 */
#ifndef MANAGED_ROUNDTRIP_H
#define MANAGED_ROUNDTRIP_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t managed_roundtrip(const float *h_in, float *h_out, size_t n, float a, float b);

#endif

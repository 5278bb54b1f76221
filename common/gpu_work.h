/* gpu_work.h - work for the GPU to do: the course's kernels behind plain C functions.
 *
 * Chapter programs, tests and learners' files are C and launch no kernel of
 * their own. When they need the GPU to compute (to keep a stream busy while
 * copies overlap it, to transform the data a pipeline moves, to read memory
 * the way a kernel would), they call these functions. Each queues its work on
 * the given stream (0 is the legacy default stream) and returns at once,
 * without waiting for it, like cudaMemcpyAsync; what it returns is the launch's
 * status. Errors of the work itself, and any error left by earlier
 * asynchronous work, show up at the next synchronisation, as for any kernel.
 *
 * Every function checks its arguments before it touches the CUDA runtime and
 * refuses bad ones with cudaErrorInvalidValue. None of them prints, exits or
 * calls CUDA_CHECK: the caller decides what an error means.
 *
 * How the kernels get here: common/gpu_work.cu is compiled by nvcc (the NVCC
 * knob) into a fatbin, machine code for every GPU architecture the toolkit
 * supports (CUDA_ARCHS overrides the list) plus PTX for newer ones, and
 * mk/kernels.mk embeds it in libcommon.a as an array of bytes. The first call
 * in a process loads it with cudaLibraryLoadData, once, whichever thread gets
 * there first. Loading at run time, rather than through the registration code
 * nvcc would add to an ordinary object, keeps every program free of CUDA calls
 * before main: a test harness that forks must not touch CUDA in its parent.
 * The first launch of each kernel in a context may also take the time to load
 * it there (CUDA's lazy loading): launch once before timing anything.
 *
 * A CUDA runtime that cannot load code (the course's stand-in for machines
 * without a GPU) makes every function return its refusal, cudaErrorNotSupported.
 */
#ifndef COURSE_GPU_WORK_H
#define COURSE_GPU_WORK_H

#include <cuda_runtime_api.h>
#include <stddef.h>

/* The longest gpu_work_keep_busy accepts: past this a display GPU's watchdog
 * could end the kernel, and no lesson needs a stream held up longer. */
#define GPU_WORK_MAX_BUSY_MS 10000.0

/* Loads the kernels into this process now, rather than at the first call, and
 * returns the outcome: cudaSuccess, or the load's error, which every later
 * call returns too (the outcome of the first load is kept for the process's
 * lifetime). */
cudaError_t gpu_work_load(void);

/* Keeps `stream` busy for `milliseconds` (0 to GPU_WORK_MAX_BUSY_MS,
 * fractions allowed): the work queued after it on the stream starts that much
 * later, as if behind a long kernel. The time is measured on the GPU's own
 * clock, so it is the same on every GPU model. One thread on one SM: other
 * streams' work runs beside it. */
cudaError_t gpu_work_keep_busy(cudaStream_t stream, double milliseconds);

/* d_y[i] = a * d_x[i] + b for i < n, on `stream`, rounded once as C's fmaf
 * rounds it. d_y may be d_x (in place) but may not overlap it otherwise. The
 * pointers are any the GPU can reach: device memory, or mapped pinned host
 * memory through its device pointer. Refused: a NULL pointer, n == 0, or
 * buffers that overlap without being the same. */
cudaError_t gpu_work_scale_add(cudaStream_t stream, float *d_y, const float *d_x, size_t n, float a,
                               float b);

/* Reads the `bytes` bytes at d_data as unsigned 32-bit words, `passes` times
 * over, and stores the sum of every word read, modulo 2^64, in *d_sum (device
 * memory the GPU can write: it is overwritten). Exact and independent of the
 * order of the reads, so it equals gpu_work_checksum_host over the same bytes.
 * d_data may be device memory or mapped pinned host memory (its device
 * pointer, from cudaHostGetDevicePointer): each pass reads it again, across
 * the PCIe link in the second case. Refused: a NULL pointer, bytes == 0 or not
 * a multiple of 4, d_data not aligned to 4 bytes, d_sum not aligned to 8,
 * passes == 0, or d_sum inside the data. */
cudaError_t gpu_work_checksum(cudaStream_t stream, const void *d_data, size_t bytes,
                              unsigned passes, unsigned long long *d_sum);

/* d_out[i] = (float)d_in[i] * scale + offset for i < n, on `stream`: bytes (8-bit pixels, say)
 * made into floats on the GPU, rounded after the multiply and again after the add, never
 * fused. The result has the bits of the host's `product = (float)byte * scale; out = product +
 * offset;` in two statements (C lets a compiler fuse a multiply and an add only within one
 * expression, and GCC in ISO C mode fuses none), so a batch converted on either side is the same. Refused: a NULL pointer, n == 0, d_out not aligned to 4 bytes, or
 * buffers that overlap. */
cudaError_t gpu_work_bytes_to_floats(cudaStream_t stream, float *d_out, const unsigned char *d_in,
                                     size_t n, float scale, float offset);

/* What gpu_work_checksum stores for the same bytes and passes, computed on the
 * host from host memory (bytes past the last whole word are not read). */
unsigned long long gpu_work_checksum_host(const void *h_data, size_t bytes, unsigned passes);

#endif

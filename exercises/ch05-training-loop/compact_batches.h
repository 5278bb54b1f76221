/* compact_batches.h - Exercise: send the pixels as bytes and make them floats on the GPU.
 *
 * A batch of images is 8-bit pixels; the training step wants floats, normalised:
 *
 *     out = (float)pixel * PIXEL_SCALE + PIXEL_OFFSET
 *
 * rounded after the multiply and again after the add. Converting on the host and sending the
 * floats sends four bytes over the link for each byte of the batch. compact_batches sends the
 * compact form instead, the bytes, and converts them on the GPU with gpu_work_bytes_to_floats
 * (gpu_work.h), whose floats have the bits of the host's conversion: a quarter of the traffic,
 * the same floats. For each of `batches` batches of n bytes, batch b at h_bytes + b * n:
 *
 *     copy its bytes up      cudaMemcpyAsync(staging, h_bytes + b * n, n,
 *                                            cudaMemcpyHostToDevice, stream)
 *     convert them there     gpu_work_bytes_to_floats(stream, d_floats + b * n, staging, n,
 *                                                     PIXEL_SCALE, PIXEL_OFFSET)
 *
 * into a device staging buffer of its own (cudaMalloc: n bytes, reused batch after batch, or
 * more) and the caller's floats. The conversion must not read the staging buffer before the
 * copy has ended, nor a copy overwrite it while a conversion still reads it: on one stream,
 * stream order sees to both; work spread over more streams needs events.
 *
 * h_bytes is pinned host memory of batches * n bytes, d_floats device memory of batches * n
 * floats, both the caller's (batches >= 1, n >= 1). It returns once d_floats holds every
 * batch's floats. Returns cudaSuccess or the first error; it stops queuing at that error. On
 * every path it waits for what it had queued and gives back every buffer and stream it made.
 */
#ifndef COMPACT_BATCHES_H
#define COMPACT_BATCHES_H

#include <cuda_runtime_api.h>
#include <stddef.h>

/* A pixel of 0 becomes -2, one of 255 becomes 2: (pixel / 255 - 0.5) / 0.25, as two roundings. */
#define PIXEL_SCALE ((float)(1.0 / (255.0 * 0.25)))
#define PIXEL_OFFSET ((float)(-0.5 / 0.25))

cudaError_t compact_batches(const unsigned char *h_bytes, size_t batches, size_t n,
                            float *d_floats);

#endif

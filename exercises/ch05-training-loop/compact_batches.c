/* compact_batches.c - send the pixels as bytes, make them floats on the GPU.
 *
 * A float is four bytes, a pixel one: converted on the host, a batch crosses the link four
 * times as large as it needs to. Copy the bytes up and let gpu_work_bytes_to_floats convert
 * them there. Run
 *     make check EX=ch05-training-loop/compact_batches
 * to see how you are doing.
 */
#include "compact_batches.h"
#include "gpu_work.h"

cudaError_t compact_batches(const unsigned char *h_bytes, size_t batches, size_t n, float *d_floats)
{
    (void)h_bytes;
    (void)batches;
    (void)n;
    (void)d_floats;
    /* TODO: cudaMalloc a staging buffer of n bytes and cudaStreamCreate a stream. For each
     * batch b, on that stream: cudaMemcpyAsync its n bytes from h_bytes + b * n into the
     * staging buffer, then gpu_work_bytes_to_floats(stream, d_floats + b * n, staging, n,
     * PIXEL_SCALE, PIXEL_OFFSET). Then cudaStreamSynchronize, cudaStreamDestroy and cudaFree,
     * on the error paths too. */
    return cudaErrorNotYetImplemented;
}

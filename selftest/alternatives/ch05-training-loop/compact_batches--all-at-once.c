/* compact_batches--all-at-once - a correct compact_batches written another way: one staging
 * buffer for every batch, all the bytes up in one cudaMemcpy, one conversion of them all on
 * the default stream, and the device waited for; the same bytes cross the link, once. */
#include "compact_batches.h"
#include "gpu_work.h"

cudaError_t compact_batches(const unsigned char *h_bytes, size_t batches, size_t n, float *d_floats)
{
    const size_t total = batches * n;
    unsigned char *d_bytes;
    cudaError_t status = cudaMalloc((void **)&d_bytes, total);
    if (status != cudaSuccess)
        return status;
    /* cudaMemcpy has finished when it returns, and the default stream runs the conversion
     * after it: nothing else to order. */
    status = cudaMemcpy(d_bytes, h_bytes, total, cudaMemcpyHostToDevice);
    if (status == cudaSuccess)
        status = gpu_work_bytes_to_floats(0, d_floats, d_bytes, total, PIXEL_SCALE, PIXEL_OFFSET);
    if (status == cudaSuccess)
        status = cudaDeviceSynchronize();
    cudaError_t freed = cudaFree(d_bytes); /* cudaFree waits for the device first */
    return status != cudaSuccess ? status : freed;
}

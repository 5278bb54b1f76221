/* compact_batches.c - send the pixels as bytes, make them floats on the GPU. */
#include "compact_batches.h"
#include "gpu_work.h"

/* Batch b's bytes up into the staging buffer, then made floats in their place in d_floats. */
static cudaError_t queue_batch(const unsigned char *h_batch, size_t n, unsigned char *staging,
                               float *d_batch, cudaStream_t stream)
{
    cudaError_t err = cudaMemcpyAsync(staging, h_batch, n, cudaMemcpyHostToDevice, stream);
    if (err == cudaSuccess)
        err = gpu_work_bytes_to_floats(stream, d_batch, staging, n, PIXEL_SCALE, PIXEL_OFFSET);
    return err;
}

cudaError_t compact_batches(const unsigned char *h_bytes, size_t batches, size_t n, float *d_floats)
{
    unsigned char *staging = NULL;
    cudaError_t err = cudaMalloc((void **)&staging, n);
    if (err != cudaSuccess)
        return err;
    cudaStream_t stream;
    err = cudaStreamCreate(&stream);
    if (err == cudaSuccess) {
        /* One stream: each conversion follows its copy, and the next copy into the staging
         * buffer follows the conversion that read it, in stream order. */
        for (size_t b = 0; b < batches && err == cudaSuccess; b++)
            err = queue_batch(h_bytes + b * n, n, staging, d_floats + b * n, stream);
        /* After an error too: what was queued before it must be over before the buffer goes. */
        cudaError_t waited = cudaStreamSynchronize(stream);
        cudaError_t destroyed = cudaStreamDestroy(stream);
        if (err == cudaSuccess)
            err = waited != cudaSuccess ? waited : destroyed;
    }
    cudaError_t freed = cudaFree(staging);
    return err == cudaSuccess ? freed : err;
}

/* pipeline.c - copy up, compute, copy back, chunk after chunk over several streams. */
#include "gpu_work.h"
#include "pipeline.h"

/* Queues chunk c (`count` floats from `first`) on its stream, with that stream's buffer. */
static cudaError_t queue_chunk(const float *h_in, float *h_out, size_t first, size_t count, float a,
                               float b, float *d_buffer, cudaStream_t stream)
{
    const size_t bytes = count * sizeof(float);
    cudaError_t err =
        cudaMemcpyAsync(d_buffer, h_in + first, bytes, cudaMemcpyHostToDevice, stream);
    if (err == cudaSuccess)
        err = gpu_work_scale_add(stream, d_buffer, d_buffer, count, a, b);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_out + first, d_buffer, bytes, cudaMemcpyDeviceToHost, stream);
    return err;
}

cudaError_t pipeline_scale_add(const float *h_in, float *h_out, size_t n, size_t chunk, float a,
                               float b, float *const *d_buffers, int streams)
{
    cudaStream_t stream[PIPELINE_MAX_STREAMS];
    int created = 0;
    cudaError_t err = cudaSuccess;
    while (created < streams && err == cudaSuccess) {
        err = cudaStreamCreate(&stream[created]);
        created += err == cudaSuccess;
    }

    /* Everything is queued before anything is waited for: that is what lets chunks overlap.
     * A stream's buffer is reused only by that stream's next chunk, which runs after the
     * previous one's copy back, in stream order. */
    for (size_t first = 0, c = 0; first < n && err == cudaSuccess; first += chunk, c++) {
        const size_t count = n - first < chunk ? n - first : chunk;
        const int s = (int)(c % (size_t)streams);
        err = queue_chunk(h_in, h_out, first, count, a, b, d_buffers[s], stream[s]);
    }

    /* Every stream waited for, after an error too: what was queued before it may still be
     * running, and the caller's buffers are the caller's again once this returns. */
    for (int s = 0; s < created; s++) {
        cudaError_t synchronized = cudaStreamSynchronize(stream[s]);
        cudaError_t destroyed = cudaStreamDestroy(stream[s]);
        if (err == cudaSuccess)
            err = synchronized != cudaSuccess ? synchronized : destroyed;
    }
    return err;
}

/* pipeline--pageable-staging.c - known mistake: each chunk goes up from a malloc'd copy.
 *
 * Copying the chunk into a buffer of one's own first looks harmless, but that
 * buffer is pageable: cudaMemcpyAsync from it stages the data through the
 * driver's pinned buffer and returns only once it has, so the host queues
 * nothing while it copies, and the copy runs at pageable speed.
 * expect: a copy goes to or from pageable host memory
 */
#include "gpu_work.h"
#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

cudaError_t pipeline_scale_add(const float *h_in, float *h_out, size_t n, size_t chunk, float a,
                               float b, float *const *d_buffers, int streams)
{
    float *h_staging = malloc(chunk * sizeof(float));
    if (h_staging == NULL)
        return cudaErrorMemoryAllocation;
    cudaStream_t stream[PIPELINE_MAX_STREAMS];
    int created = 0;
    cudaError_t err = cudaSuccess;
    while (created < streams && err == cudaSuccess) {
        err = cudaStreamCreate(&stream[created]);
        created += err == cudaSuccess;
    }
    for (size_t first = 0, c = 0; first < n && err == cudaSuccess; first += chunk, c++) {
        const size_t count = n - first < chunk ? n - first : chunk;
        const int s = (int)(c % (size_t)streams);
        memcpy(h_staging, h_in + first, count * sizeof(float));
        /* From pageable memory the call returns once the data is staged: reusing it is safe. */
        err = cudaMemcpyAsync(d_buffers[s], h_staging, count * sizeof(float),
                              cudaMemcpyHostToDevice, stream[s]);
        if (err == cudaSuccess)
            err = gpu_work_scale_add(stream[s], d_buffers[s], d_buffers[s], count, a, b);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(h_out + first, d_buffers[s], count * sizeof(float),
                                  cudaMemcpyDeviceToHost, stream[s]);
    }
    for (int s = 0; s < created; s++) {
        cudaError_t synchronized = err == cudaSuccess ? cudaStreamSynchronize(stream[s]) : err;
        cudaError_t destroyed = cudaStreamDestroy(stream[s]);
        if (err == cudaSuccess)
            err = synchronized != cudaSuccess ? synchronized : destroyed;
    }
    free(h_staging);
    return err;
}

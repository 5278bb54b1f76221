/* prefetch_round.c - a managed round trip whose pages move ahead of the work, not on faults. */
#include "gpu_work.h"
#include "prefetch_round.h"

#include <string.h>

/* Queues the pages' way to the GPU, the kernel and their way back, in that order on `stream`. */
static cudaError_t queue_round(float *buffer, size_t n, float a, float b, int device,
                               cudaStream_t stream)
{
    const size_t bytes = n * sizeof(float);
    const struct cudaMemLocation gpu = {.type = cudaMemLocationTypeDevice, .id = device};
    const struct cudaMemLocation host = {.type = cudaMemLocationTypeHost};
    cudaError_t err = cudaMemPrefetchAsync(buffer, bytes, gpu, 0, stream);
    if (err == cudaSuccess)
        err = gpu_work_scale_add(stream, buffer, buffer, n, a, b);
    if (err == cudaSuccess)
        err = cudaMemPrefetchAsync(buffer, bytes, host, 0, stream);
    return err;
}

cudaError_t prefetch_round(const float *h_in, float *h_out, size_t n, float a, float b)
{
    const size_t bytes = n * sizeof(float);
    int device;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    float *buffer;
    err = cudaMallocManaged((void **)&buffer, bytes, cudaMemAttachGlobal);
    if (err != cudaSuccess)
        return err;
    memcpy(buffer, h_in, bytes); /* the host's first touch: the pages start on the host */

    cudaStream_t stream;
    err = cudaStreamCreate(&stream);
    if (err == cudaSuccess) {
        err = queue_round(buffer, n, a, b, device, stream);
        /* Queued is not done: the results are on the host only once the stream has got past
         * the prefetch back. After an error too, wait for what was queued before it. */
        cudaError_t waited = cudaStreamSynchronize(stream);
        if (err == cudaSuccess)
            err = waited;
        if (err == cudaSuccess)
            memcpy(h_out, buffer, bytes);
        cudaError_t destroyed = cudaStreamDestroy(stream);
        if (err == cudaSuccess)
            err = destroyed;
    }
    cudaError_t freed = cudaFree(buffer);
    return err != cudaSuccess ? err : freed;
}

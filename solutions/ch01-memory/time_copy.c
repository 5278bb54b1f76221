/* time_copy.c - time one cudaMemcpy with two CUDA events. */
#include "time_copy.h"

cudaError_t time_copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                         float *elapsed_ms)
{
    cudaEvent_t start, stop;
    cudaError_t err = cudaEventCreate(&start);
    if (err != cudaSuccess)
        return err;
    err = cudaEventCreate(&stop);
    if (err != cudaSuccess) {
        cudaEventDestroy(start);
        return err;
    }

    err = cudaEventRecord(start, 0);
    if (err == cudaSuccess)
        err = cudaMemcpy(dst, src, bytes, kind);
    if (err == cudaSuccess)
        err = cudaEventRecord(stop, 0);
    /* The GPU timestamps stop when it gets there, which may be after cudaMemcpy returns. */
    if (err == cudaSuccess)
        err = cudaEventSynchronize(stop);
    if (err == cudaSuccess)
        err = cudaEventElapsedTime(elapsed_ms, start, stop);

    cudaError_t destroyed_stop = cudaEventDestroy(stop);
    cudaError_t destroyed_start = cudaEventDestroy(start);
    if (err == cudaSuccess)
        err = destroyed_stop != cudaSuccess ? destroyed_stop : destroyed_start;
    return err;
}

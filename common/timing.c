/* timing.c - an event timer and a monotonic host clock. */
#include "timing.h"

#include "cuda_check.h"

#include <time.h>

cudaError_t event_timer_create(event_timer *timer)
{
    cudaError_t err = CUDA_CHECK(cudaEventCreate(&timer->start));
    if (err != cudaSuccess)
        return err;
    err = CUDA_CHECK(cudaEventCreate(&timer->stop));
    if (err != cudaSuccess)
        cudaEventDestroy(timer->start);
    return err;
}

cudaError_t event_timer_start(event_timer *timer, cudaStream_t stream)
{
    return CUDA_CHECK(cudaEventRecord(timer->start, stream));
}

cudaError_t event_timer_stop(event_timer *timer, cudaStream_t stream, float *elapsed_ms)
{
    cudaError_t err = CUDA_CHECK(cudaEventRecord(timer->stop, stream));
    if (err == cudaSuccess)
        err = CUDA_CHECK(cudaEventSynchronize(timer->stop));
    if (err == cudaSuccess)
        err = CUDA_CHECK(cudaEventElapsedTime(elapsed_ms, timer->start, timer->stop));
    return err;
}

cudaError_t event_timer_destroy(event_timer *timer)
{
    cudaError_t first = CUDA_CHECK(cudaEventDestroy(timer->start));
    cudaError_t second = CUDA_CHECK(cudaEventDestroy(timer->stop));
    return first != cudaSuccess ? first : second;
}

double host_clock_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

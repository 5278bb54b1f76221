/* double_buffer.c - copy batch b + 1 up while the GPU steps on batch b. */
#include "double_buffer.h"
#include "gpu_work.h"

#include <string.h>

/* Everything the loop makes; NULL until made, so that one release path serves every exit. */
typedef struct loop {
    float *buffer[2];
    cudaStream_t copies, steps;
    cudaEvent_t copied[2], stepped[2];
} loop;

static cudaError_t make_loop(loop *l, size_t n)
{
    memset(l, 0, sizeof *l);
    cudaError_t err = cudaSuccess;
    for (int slot = 0; slot < 2 && err == cudaSuccess; slot++) {
        err = cudaMalloc((void **)&l->buffer[slot], n * sizeof(float));
        if (err == cudaSuccess)
            err = cudaEventCreateWithFlags(&l->copied[slot], cudaEventDisableTiming);
        if (err == cudaSuccess)
            err = cudaEventCreateWithFlags(&l->stepped[slot], cudaEventDisableTiming);
    }
    if (err == cudaSuccess)
        err = cudaStreamCreate(&l->copies);
    if (err == cudaSuccess)
        err = cudaStreamCreate(&l->steps);
    return err;
}

/* Waits for what was queued, then gives back what was made; the first error, or `err`. */
static cudaError_t release_loop(loop *l, cudaError_t err)
{
    cudaStream_t streams[2] = {l->copies, l->steps};
    for (int s = 0; s < 2; s++) {
        if (streams[s] == NULL)
            continue;
        cudaError_t waited = cudaStreamSynchronize(streams[s]);
        cudaError_t destroyed = cudaStreamDestroy(streams[s]);
        if (err == cudaSuccess)
            err = waited != cudaSuccess ? waited : destroyed;
    }
    for (int slot = 0; slot < 2; slot++) {
        cudaEvent_t events[2] = {l->copied[slot], l->stepped[slot]};
        for (int e = 0; e < 2; e++)
            if (events[e] != NULL) {
                cudaError_t destroyed = cudaEventDestroy(events[e]);
                err = err == cudaSuccess ? destroyed : err;
            }
        if (l->buffer[slot] != NULL) {
            cudaError_t freed = cudaFree(l->buffer[slot]);
            err = err == cudaSuccess ? freed : err;
        }
    }
    return err;
}

/* Batch b: up into buffer b % 2 once step b - 2 has let go of it, stepped on once it is there. */
static cudaError_t queue_batch(loop *l, const float *h_batch, size_t n, double step_ms,
                               unsigned long long *d_sum, int slot)
{
    const size_t bytes = n * sizeof(float);
    /* Waiting for an event never recorded (the first two batches) waits for nothing. */
    cudaError_t err = cudaStreamWaitEvent(l->copies, l->stepped[slot], 0);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(l->buffer[slot], h_batch, bytes, cudaMemcpyHostToDevice, l->copies);
    if (err == cudaSuccess)
        err = cudaEventRecord(l->copied[slot], l->copies);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(l->steps, l->copied[slot], 0);
    if (err == cudaSuccess)
        err = gpu_work_keep_busy(l->steps, step_ms);
    if (err == cudaSuccess)
        err = gpu_work_checksum(l->steps, l->buffer[slot], bytes, 1, d_sum);
    if (err == cudaSuccess)
        err = cudaEventRecord(l->stepped[slot], l->steps);
    return err;
}

cudaError_t double_buffer_train(const float *h_batches, size_t batches, size_t n, double step_ms,
                                unsigned long long *d_sums)
{
    loop l;
    cudaError_t err = make_loop(&l, n);
    /* The host queues every batch and waits only at the end: the events, not the host, keep
     * the copies and the steps apart. */
    for (size_t b = 0; b < batches && err == cudaSuccess; b++)
        err = queue_batch(&l, h_batches + b * n, n, step_ms, d_sums + b, (int)(b % 2));
    return release_loop(&l, err);
}

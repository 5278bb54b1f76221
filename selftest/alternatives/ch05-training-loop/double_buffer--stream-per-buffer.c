/* double_buffer--stream-per-buffer - a correct double_buffer_train written another way: one
 * allocation split in two halves, a stream of its own for each half that both copies and
 * steps that half's batches, so stream order alone keeps each half's copy after the step
 * before it; no events at all; goto cleanup; one cudaDeviceSynchronize at the end. */
#include "double_buffer.h"
#include "gpu_work.h"

cudaError_t double_buffer_train(const float *h_batches, size_t batches, size_t n, double step_ms,
                                unsigned long long *d_sums)
{
    float *halves = NULL;
    cudaStream_t lane[2] = {NULL, NULL};
    cudaError_t err = cudaMalloc((void **)&halves, 2 * n * sizeof(float));
    if (err != cudaSuccess)
        goto done;
    for (int k = 0; k < 2; k++) {
        err = cudaStreamCreateWithFlags(&lane[k], cudaStreamNonBlocking);
        if (err != cudaSuccess)
            goto done;
    }
    /* Batch b and batch b + 1 are on different lanes, so one's copy runs during the other's
     * step; within a lane, the copy of b + 2 queues behind the step of b. */
    for (size_t b = 0; b < batches; b++) {
        float *half = halves + (b & 1) * n;
        cudaStream_t s = lane[b & 1];
        err =
            cudaMemcpyAsync(half, &h_batches[b * n], sizeof(float) * n, cudaMemcpyHostToDevice, s);
        if (err == cudaSuccess)
            err = gpu_work_keep_busy(s, step_ms);
        if (err == cudaSuccess)
            err = gpu_work_checksum(s, half, sizeof(float) * n, 1, &d_sums[b]);
        if (err != cudaSuccess)
            goto done;
    }
done:;
    /* Whatever was queued before an error must be over before the memory goes back. */
    cudaError_t waited = cudaDeviceSynchronize();
    if (err == cudaSuccess)
        err = waited;
    for (int k = 0; k < 2; k++)
        if (lane[k] != NULL) {
            cudaError_t destroyed = cudaStreamDestroy(lane[k]);
            if (err == cudaSuccess)
                err = destroyed;
        }
    if (halves != NULL) {
        cudaError_t freed = cudaFree(halves);
        if (err == cudaSuccess)
            err = freed;
    }
    return err;
}

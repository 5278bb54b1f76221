/* prefetch_round--two-streams-events.c - a correct solution written another way: the kernel
 * runs on a second stream, ordered after the prefetch to the GPU and before the prefetch back by
 * events the streams wait for on the GPU (cudaStreamWaitEvent); both streams are created
 * cudaStreamNonBlocking; the host waits for an event recorded after the prefetch back, writes
 * and reads the buffer element by element, and cleans up through one goto label.
 *
 * An alternative, not a mistake: it must earn every point from make check and make grade
 * alike (selftest/sections/64-agreement.sh).
 */
#include "gpu_work.h"
#include "prefetch_round.h"

#define KEEP_FIRST(err, call)                                                                      \
    do {                                                                                           \
        cudaError_t result_ = (call);                                                              \
        if ((err) == cudaSuccess)                                                                  \
            (err) = result_;                                                                       \
    } while (0)

cudaError_t prefetch_round(const float *h_in, float *h_out, size_t n, float a, float b)
{
    float *buffer = NULL;
    cudaStream_t moves = NULL, compute = NULL;
    cudaEvent_t arrived = NULL, computed = NULL, back = NULL;
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaMallocManaged((void **)&buffer, n * sizeof *buffer, cudaMemAttachGlobal);
    if (err != cudaSuccess)
        goto out;
    for (size_t i = 0; i < n; i++)
        buffer[i] = h_in[i];

    if ((err = cudaStreamCreateWithFlags(&moves, cudaStreamNonBlocking)) != cudaSuccess ||
        (err = cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking)) != cudaSuccess ||
        (err = cudaEventCreateWithFlags(&arrived, cudaEventDisableTiming)) != cudaSuccess ||
        (err = cudaEventCreateWithFlags(&computed, cudaEventDisableTiming)) != cudaSuccess ||
        (err = cudaEventCreateWithFlags(&back, cudaEventDisableTiming)) != cudaSuccess)
        goto out;

    struct cudaMemLocation where = {.type = cudaMemLocationTypeDevice, .id = device};
    if ((err = cudaMemPrefetchAsync(buffer, n * sizeof *buffer, where, 0, moves)) != cudaSuccess ||
        (err = cudaEventRecord(arrived, moves)) != cudaSuccess ||
        (err = cudaStreamWaitEvent(compute, arrived, 0)) != cudaSuccess ||
        (err = gpu_work_scale_add(compute, buffer, buffer, n, a, b)) != cudaSuccess ||
        (err = cudaEventRecord(computed, compute)) != cudaSuccess ||
        (err = cudaStreamWaitEvent(moves, computed, 0)) != cudaSuccess)
        goto out;
    where = (struct cudaMemLocation){.type = cudaMemLocationTypeHost};
    if ((err = cudaMemPrefetchAsync(buffer, n * sizeof *buffer, where, 0, moves)) != cudaSuccess ||
        (err = cudaEventRecord(back, moves)) != cudaSuccess ||
        (err = cudaEventSynchronize(back)) != cudaSuccess)
        goto out;
    for (size_t i = 0; i < n; i++)
        h_out[i] = buffer[i];

out:
    /* Whatever was queued before an error finishes before anything is given back. */
    if (compute != NULL)
        KEEP_FIRST(err, cudaStreamSynchronize(compute));
    if (moves != NULL)
        KEEP_FIRST(err, cudaStreamSynchronize(moves));
    if (back != NULL)
        KEEP_FIRST(err, cudaEventDestroy(back));
    if (computed != NULL)
        KEEP_FIRST(err, cudaEventDestroy(computed));
    if (arrived != NULL)
        KEEP_FIRST(err, cudaEventDestroy(arrived));
    if (compute != NULL)
        KEEP_FIRST(err, cudaStreamDestroy(compute));
    if (moves != NULL)
        KEEP_FIRST(err, cudaStreamDestroy(moves));
    if (buffer != NULL)
        KEEP_FIRST(err, cudaFree(buffer));
    return err;
}

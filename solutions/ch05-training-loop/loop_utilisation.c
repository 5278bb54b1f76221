/* loop_utilisation.c - how busy the GPU is in a loop that loads, then steps. */
#include "loop_utilisation.h"

#include "gpu_work.h"

#include <time.h>

enum { LOOP_START, LOOP_STOP, STEP_START, STEP_STOP, EVENTS };

/* The host's work for one batch: a sleep stands in for reading and converting it. */
static void host_work(double ms)
{
    const long ns = (long)(ms * 1e6);
    struct timespec left = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&left, &left) != 0) {
    }
}

/* The time between two events once the GPU has reached the later one. */
static cudaError_t elapsed_after(cudaEvent_t start, cudaEvent_t stop, float *ms)
{
    cudaError_t err = cudaEventSynchronize(stop);
    if (err == cudaSuccess)
        err = cudaEventElapsedTime(ms, start, stop);
    return err;
}

static cudaError_t run_loop(cudaStream_t stream, int steps, double host_ms, double step_ms,
                            const cudaEvent_t *ev, double *utilisation)
{
    double busy_ms = 0;
    cudaError_t err = cudaEventRecord(ev[LOOP_START], stream);
    for (int s = 0; s < steps && err == cudaSuccess; s++) {
        host_work(host_ms); /* the GPU waits meanwhile: that is what is measured */
        float ms = 0;
        err = cudaEventRecord(ev[STEP_START], stream);
        if (err == cudaSuccess)
            err = gpu_work_keep_busy(stream, step_ms);
        if (err == cudaSuccess)
            err = cudaEventRecord(ev[STEP_STOP], stream);
        if (err == cudaSuccess)
            err = elapsed_after(ev[STEP_START], ev[STEP_STOP], &ms);
        busy_ms += ms;
    }
    float loop_ms = 0;
    if (err == cudaSuccess)
        err = cudaEventRecord(ev[LOOP_STOP], stream);
    if (err == cudaSuccess)
        err = elapsed_after(ev[LOOP_START], ev[LOOP_STOP], &loop_ms);
    if (err == cudaSuccess)
        *utilisation = busy_ms / loop_ms;
    return err;
}

cudaError_t loop_utilisation(cudaStream_t stream, int steps, double host_ms, double step_ms,
                             double *utilisation)
{
    cudaEvent_t ev[EVENTS];
    int made = 0;
    cudaError_t err = cudaSuccess;
    for (; made < EVENTS && err == cudaSuccess; made++)
        err = cudaEventCreate(&ev[made]);
    if (err != cudaSuccess)
        made--; /* the one that failed was not made */
    else
        err = run_loop(stream, steps, host_ms, step_ms, ev, utilisation);
    for (int e = 0; e < made; e++) {
        cudaError_t destroyed = cudaEventDestroy(ev[e]);
        if (err == cudaSuccess)
            err = destroyed;
    }
    return err;
}

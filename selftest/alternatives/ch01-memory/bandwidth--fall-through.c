/* bandwidth--fall-through.c - a correct solution written another way: an insertion sort for
 * the median, and one cleanup switch whose cases fall through on purpose, each marked with
 * the comment gcc reads (-Wimplicit-fallthrough): the grader must compile what make check
 * compiles, comments and all.
 *
 * An alternative, not a mistake: it must earn every point from make check and make grade
 * alike (selftest/sections/64-agreement.sh).
 */
#include "bandwidth.h"

#include <stdlib.h>

double median_ms(double *ms, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && ms[j - 1] > ms[j]; j--) {
            const double t = ms[j];
            ms[j] = ms[j - 1];
            ms[j - 1] = t;
        }
    return (n & 1) ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

double gb_per_s(size_t bytes, double ms)
{
    return (double)bytes / (ms * 1e6);
}

cudaError_t measure_bandwidth_gb_per_s(size_t bytes, enum cudaMemcpyKind kind, int runs,
                                       double *result)
{
    if (bytes == 0 || runs < 1 || result == NULL ||
        !(kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost))
        return cudaErrorInvalidValue;
    enum { NOTHING, TIMES, HOST, DEVICE, START, STOP } held = NOTHING;
    double *times = NULL;
    void *host = NULL, *device = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    cudaError_t err = cudaErrorMemoryAllocation;

    if (!(times = malloc(sizeof(double) * (size_t)runs)))
        goto release;
    held = TIMES;
    if ((err = cudaMallocHost(&host, bytes)) != cudaSuccess)
        goto release;
    held = HOST;
    if ((err = cudaMalloc(&device, bytes)) != cudaSuccess)
        goto release;
    held = DEVICE;
    if ((err = cudaEventCreate(&start)) != cudaSuccess)
        goto release;
    held = START;
    if ((err = cudaEventCreate(&stop)) != cudaSuccess)
        goto release;
    held = STOP;

    void *to = kind == cudaMemcpyHostToDevice ? device : host;
    void *from = kind == cudaMemcpyHostToDevice ? host : device;
    if ((err = cudaMemcpy(to, from, bytes, kind)) != cudaSuccess) /* the warm-up */
        goto release;
    for (int r = 0; r < runs; r++) {
        float ms = 0;
        if ((err = cudaEventRecord(start, 0)) != cudaSuccess ||
            (err = cudaMemcpy(to, from, bytes, kind)) != cudaSuccess ||
            (err = cudaEventRecord(stop, 0)) != cudaSuccess ||
            (err = cudaEventSynchronize(stop)) != cudaSuccess ||
            (err = cudaEventElapsedTime(&ms, start, stop)) != cudaSuccess)
            goto release;
        times[r] = ms;
    }
    *result = gb_per_s(bytes, median_ms(times, runs));

release:
    switch (held) {
    case STOP:
        cudaEventDestroy(stop);
        /* fall through */
    case START:
        cudaEventDestroy(start);
        /* fall through */
    case DEVICE:
        cudaFree(device);
        /* fall through */
    case HOST:
        cudaFreeHost(host);
        /* fall through */
    case TIMES:
        free(times);
        /* fall through */
    case NOTHING:
        break;
    }
    return err;
}

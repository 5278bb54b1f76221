/* bandwidth--comparator-truncates.c - known mistake: the sort's comparator returns (int)(a - b).
 *
 * Times less than 1 ms apart, as real copy times often are, differ by less than
 * 1, which the cast truncates to 0: qsort sees them all as equal and leaves them
 * unsorted, so the "median" is whichever time happened to be in the middle.
 * expect: A comparator that returns (int)(a - b)
 */
#include "bandwidth.h"

#include <stdlib.h>

static int by_value(const void *a, const void *b)
{
    return (int)(*(const double *)a - *(const double *)b);
}

double median_ms(double *ms, int n)
{
    qsort(ms, (size_t)n, sizeof *ms, by_value);
    return n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

double gb_per_s(size_t bytes, double ms)
{
    return (double)bytes / 1e9 / (ms / 1e3); /* a GB is 10^9 bytes; ms / 1000 is seconds */
}

/* Times `runs` copies into ms[], one pair of events each. */
static cudaError_t time_copies(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                               int runs, double *ms)
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
    for (int r = 0; r < runs && err == cudaSuccess; r++) {
        float elapsed = 0;
        err = cudaEventRecord(start, 0);
        if (err == cudaSuccess)
            err = cudaMemcpy(dst, src, bytes, kind);
        if (err == cudaSuccess)
            err = cudaEventRecord(stop, 0);
        if (err == cudaSuccess)
            err = cudaEventSynchronize(stop);
        if (err == cudaSuccess)
            err = cudaEventElapsedTime(&elapsed, start, stop);
        ms[r] = elapsed;
    }
    cudaEventDestroy(stop);
    cudaEventDestroy(start);
    return err;
}

cudaError_t measure_bandwidth_gb_per_s(size_t bytes, enum cudaMemcpyKind kind, int runs,
                                       double *result)
{
    if ((kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost) || bytes == 0 ||
        runs < 1 || result == NULL)
        return cudaErrorInvalidValue;

    double *ms = malloc((size_t)runs * sizeof *ms);
    if (ms == NULL)
        return cudaErrorMemoryAllocation;
    void *h_buffer = NULL, *d_buffer = NULL;
    cudaError_t err = cudaMallocHost(&h_buffer, bytes); /* pinned: the DMA engine reads it */
    if (err == cudaSuccess)
        err = cudaMalloc(&d_buffer, bytes);
    if (err == cudaSuccess) {
        void *dst = kind == cudaMemcpyHostToDevice ? d_buffer : h_buffer;
        const void *src = kind == cudaMemcpyHostToDevice ? h_buffer : d_buffer;
        err = cudaMemcpy(dst, src, bytes, kind); /* warm-up: pays the one-time costs, untimed */
        if (err == cudaSuccess)
            err = time_copies(dst, src, bytes, kind, runs, ms);
    }
    if (err == cudaSuccess)
        *result = gb_per_s(bytes, median_ms(ms, runs));

    if (d_buffer != NULL)
        cudaFree(d_buffer);
    if (h_buffer != NULL)
        cudaFreeHost(h_buffer);
    free(ms);
    return err;
}

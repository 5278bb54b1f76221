/* 04-directions.c - the four directions of cudaMemcpy, and the calls the runtime rejects.
 *
 * One buffer travels host -> host -> device -> device -> host, one call per
 * direction, and arrives intact; then it makes the same trip with
 * cudaMemcpyDefault, which lets the runtime work out the direction from the
 * pointers. Then come three calls that are wrong on purpose. Look at which
 * ones the runtime refuses, with which error, and at the one it lets through:
 * on every 64-bit platform the runtime knows from a pointer's value alone
 * whether it points into device memory, pinned host memory or neither
 * (unified addressing), and that decides what a wrong `kind` costs.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "units.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "[N]   move N floats (default 1M; K and M multiply by 1024)";

/* How far past the end of a device allocation the overlong copy reaches: far
 * beyond any rounding up of the allocation's size. */
#define OVERRUN_BYTES ((size_t)2 << 20)

static void fill(float *h_buffer, size_t n, float offset)
{
    for (size_t i = 0; i < n; i++)
        h_buffer[i] = (float)(i % 1000000) + offset; /* exact, and never the poison */
}

/* Counts the floats of h_got that differ from h_expected. */
static size_t count_wrong(const float *h_got, const float *h_expected, size_t n)
{
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += h_got[i] != h_expected[i];
    return wrong;
}

/* For a call that is wrong on purpose: prints what it returned and whether
 * that is what CUDA 13 returns (see the course's measured facts); true if so. */
static bool expect_error(const char *mistake, const char *call, cudaError_t got,
                         cudaError_t expected)
{
    /* A failed call also leaves its error as the thread's "last error"; clear
     * it so that nothing later mistakes this planned failure for its own. */
    (void)cudaGetLastError();
    printf("  %s\n      %s\n      -> %s", mistake, call, cudaGetErrorName(got));
    if (got == expected)
        printf("  (expected)\n");
    else
        printf("  UNEXPECTED: expected %s\n", cudaGetErrorName(expected));
    return got == expected;
}

/* The buffers of the trip: a source, a staging buffer and a result on the host, two buffers on
 * the device. */
typedef struct trip {
    float *h_source, *h_staging, *h_result, *d_first, *d_second;
    size_t n;
} trip;

/* The trip through the four directions, each named, then with cudaMemcpyDefault. Returns what
 * went wrong, or NULL. */
static const char *four_directions(const trip *t)
{
    float *h_source = t->h_source, *h_staging = t->h_staging, *h_result = t->h_result;
    float *d_first = t->d_first, *d_second = t->d_second;
    const size_t n = t->n, bytes = n * sizeof(float);
    char size[32];
    const char *failure = NULL;
    printf("One trip through all four directions, %zu floats (%s)\n", n,
           format_bytes(bytes, size, sizeof size));
    memset(h_result, 0xFF, bytes);
    /* listing: four-directions */
    CUDA_CHECK(cudaMemcpy(h_staging, h_source, bytes, cudaMemcpyHostToHost));
    CUDA_CHECK(cudaMemcpy(d_first, h_staging, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_second, d_first, bytes, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(h_result, d_second, bytes, cudaMemcpyDeviceToHost));
    /* end listing: four-directions */
    size_t wrong = count_wrong(h_result, h_source, n);
    printf("  host -> host -> device -> device -> host: %s\n",
           wrong == 0 ? "arrived intact" : "ARRIVED DAMAGED");
    if (wrong != 0)
        failure = "the trip through the four directions damaged the data";

    /* The same trip again, every buffer poisoned first so that nothing left
     * over from the first trip can pass for this one's result. */
    printf("\nThe same trip with cudaMemcpyDefault: the runtime reads each pointer\n");
    memset(h_staging, 0xFF, bytes);
    memset(h_result, 0xFF, bytes);
    CUDA_CHECK(cudaMemset(d_first, 0xFF, bytes));
    CUDA_CHECK(cudaMemset(d_second, 0xFF, bytes));
    /* listing: memcpy-default */
    CUDA_CHECK(cudaMemcpy(h_staging, h_source, bytes, cudaMemcpyDefault));
    CUDA_CHECK(cudaMemcpy(d_first, h_staging, bytes, cudaMemcpyDefault));
    CUDA_CHECK(cudaMemcpy(d_second, d_first, bytes, cudaMemcpyDefault));
    CUDA_CHECK(cudaMemcpy(h_result, d_second, bytes, cudaMemcpyDefault));
    /* end listing: memcpy-default */
    wrong = count_wrong(h_result, h_source, n);
    printf("  host -> host -> device -> device -> host: %s\n",
           wrong == 0 ? "arrived intact" : "ARRIVED DAMAGED");
    if (wrong != 0 && failure == NULL)
        failure = "the trip with cudaMemcpyDefault damaged the data";

    return failure;
}

/* Calls that are wrong on purpose: what the runtime refuses, and what it lets through. Returns
 * what went wrong, or NULL. */
static const char *wrong_calls(const trip *t)
{
    float *h_source = t->h_source, *h_result = t->h_result, *d_first = t->d_first;
    const size_t n = t->n, bytes = n * sizeof(float);
    const char *failure = NULL;
    size_t wrong;
    printf("\nWhat the runtime rejects (each call below is wrong on purpose)\n");
    bool as_documented = true;
    float *h_roomy = host_alloc(bytes + OVERRUN_BYTES); /* room for the overlong copy */
    /* listing: rejected-calls */
    /* (a) A host-to-device copy that claims to go device to host. h_source is
     * pageable memory from malloc, which the runtime does not take for device
     * memory (unless the system lets the GPU reach it, through HMM or ATS), so
     * it cannot be the device-side source that the kind says it is. */
    as_documented &= expect_error("(a) the wrong kind, with pageable host memory",
                                  "cudaMemcpy(d_first, h_source, bytes, cudaMemcpyDeviceToHost)",
                                  cudaMemcpy(d_first, h_source, bytes, cudaMemcpyDeviceToHost),
                                  cudaErrorInvalidValue);
    /* (b) A count past the end of the device allocation: the runtime knows
     * each allocation's extent and refuses to read beyond it. */
    as_documented &=
        expect_error("(b) a count that runs 2 MiB past the end of d_first's allocation",
                     "cudaMemcpy(h_roomy, d_first, bytes + 2 MiB, cudaMemcpyDeviceToHost)",
                     cudaMemcpy(h_roomy, d_first, bytes + OVERRUN_BYTES, cudaMemcpyDeviceToHost),
                     cudaErrorInvalidValue);
    /* end listing: rejected-calls */

    /* (c) The wrong kind of (a) again, but with pinned host memory: accepted. */
    printf("\nWhat it lets through\n");
    float *h_pinned = NULL;
    CUDA_CHECK(cudaMallocHost((void **)&h_pinned, bytes));
    fill(h_pinned, n, 0.25f); /* a different pattern from the one already on the device */
    /* listing: swapped-kind-pinned */
    /* Pinned memory is registered with the driver and mapped into the GPU's
     * address space, so a pointer into it is a valid source or destination for
     * either side; the copy goes where the pointers say, whatever the kind. */
    cudaError_t swapped = cudaMemcpy(d_first, h_pinned, bytes, cudaMemcpyDeviceToHost);
    /* end listing: swapped-kind-pinned */
    as_documented &= expect_error("(c) the wrong kind of (a), with pinned host memory",
                                  "cudaMemcpy(d_first, h_pinned, bytes, cudaMemcpyDeviceToHost)",
                                  swapped, cudaSuccess);
    if (swapped == cudaSuccess) {
        memset(h_result, 0xFF, bytes);
        CUDA_CHECK(cudaMemcpy(h_result, d_first, bytes, cudaMemcpyDeviceToHost));
        wrong = count_wrong(h_result, h_pinned, n);
        printf("      and the data went from h_pinned to d_first: %s\n",
               wrong == 0 ? "yes" : "NO, the device does not hold it");
        if (wrong != 0 && failure == NULL)
            failure = "the swapped-kind copy from pinned memory succeeded but moved nothing";
    }
    printf("  Both sides of that copy are reachable by the GPU, so the runtime can\n"
           "  work out the direction itself, as it does for cudaMemcpyDefault. Do not\n"
           "  rely on it: with pageable memory the same mistake is an error, as (a) shows.\n");
    if (!as_documented && failure == NULL)
        failure = "a wrong call did not behave as documented for this runtime (see above)";

    CUDA_CHECK(cudaFreeHost(h_pinned));
    free(h_roomy);
    return failure;
}

int main(int argc, char **argv)
{
    size_t n = float_count_argument(argc, argv, usage, 1 << 20);
    if (n * sizeof(float) > SIZE_MAX - OVERRUN_BYTES)
        usage_error(argv[0], usage, "'%s' floats is too many", argv[1]);

    const size_t bytes = n * sizeof(float);
    trip t = {host_alloc(bytes), host_alloc(bytes), host_alloc(bytes), NULL, NULL, n};
    fill(t.h_source, n, 0.5f);
    CUDA_CHECK(cudaMalloc((void **)&t.d_first, bytes));
    CUDA_CHECK(cudaMalloc((void **)&t.d_second, bytes));

    const char *failure = four_directions(&t);
    const char *wrong = wrong_calls(&t);
    if (failure == NULL)
        failure = wrong;

    CUDA_CHECK(cudaFree(t.d_first));
    CUDA_CHECK(cudaFree(t.d_second));
    free(t.h_source);
    free(t.h_staging);
    free(t.h_result);
    return verdict(failure);
}

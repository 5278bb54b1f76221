/* gpu_work.c - the host side of the course's kernels: load them once, check arguments, launch.
 *
 * The kernels are gpu_work.cu's, in the fatbin that mk/kernels.mk embeds as
 * gpu_work_fatbin. They are loaded with the runtime's library API and launched
 * through cudaLaunchKernel, which takes the cudaKernel_t handle that
 * cudaLibraryGetKernel returns cast to a function pointer (the CUDA runtime
 * API's note on cudaKernel_t, under cudaLaunchKernel). None of the calls here
 * is one the test harness traces (harness/trace/traced_calls.def), so the kernels
 * never show up among the learner's calls.
 */
#include "gpu_work.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* Generated from gpu_work.cu by mk/kernels.mk. */
extern const unsigned char gpu_work_fatbin[];

enum kernel { KEEP_BUSY, SCALE_ADD, ZERO, CHECKSUM, BYTES_TO_FLOATS, KERNEL_COUNT };
/* Their names in gpu_work.cu. The self-test checks that the fatbin holds each
 * name quoted here, for every architecture (selftest/sections/45-kernels.sh). */
static const char *const kernel_names[KERNEL_COUNT] = {
    [KEEP_BUSY] = "gpu_work_busy_kernel",
    [SCALE_ADD] = "gpu_work_scale_add_kernel",
    [ZERO] = "gpu_work_zero_kernel",
    [CHECKSUM] = "gpu_work_checksum_kernel",
    [BYTES_TO_FLOATS] = "gpu_work_bytes_to_floats_kernel",
};

/* Enough blocks of THREADS to fill any GPU; the kernels' grid-stride loops do the rest. */
enum { THREADS = 256, MAX_BLOCKS = 2048 };

/* Loaded once per process, by whichever thread calls first; the others wait for it. C11
 * atomics rather than pthread_once, so that no program needs -pthread to link libcommon
 * (glibc before 2.34 keeps pthread_once out of libc). */
enum { NOT_LOADED, LOADING, LOADED };
static atomic_int load_state = NOT_LOADED;
static cudaError_t load_status;
static cudaKernel_t kernels[KERNEL_COUNT];

/* The library stays loaded for the life of the process: its kernels may be
 * running when the process ends. */
static void load_kernels(void)
{
    cudaLibrary_t library;
    load_status = cudaLibraryLoadData(&library, gpu_work_fatbin, NULL, NULL, 0, NULL, NULL, 0);
    for (int k = 0; k < KERNEL_COUNT && load_status == cudaSuccess; k++)
        load_status = cudaLibraryGetKernel(&kernels[k], library, kernel_names[k]);
}

cudaError_t gpu_work_load(void)
{
    int expected = NOT_LOADED;
    if (atomic_compare_exchange_strong(&load_state, &expected, LOADING)) {
        load_kernels();
        atomic_store(&load_state, LOADED); /* after load_status and kernels[] are written */
    } else {
        while (atomic_load(&load_state) != LOADED) {
            /* another thread is loading: milliseconds, once in the process's life */
        }
    }
    return load_status;
}

static cudaError_t launch(enum kernel k, size_t elements, void **args, cudaStream_t stream)
{
    cudaError_t err = gpu_work_load();
    if (err != cudaSuccess)
        return err;
    size_t blocks = (elements + THREADS - 1) / THREADS;
    dim3 grid = {blocks < MAX_BLOCKS ? (unsigned)blocks : MAX_BLOCKS, 1, 1};
    dim3 block = {elements < THREADS ? (unsigned)elements : THREADS, 1, 1};
    return cudaLaunchKernel((const void *)kernels[k], grid, block, args, 0, stream);
}

/* Whether [p, p + bytes) is an address range at all, so that the overlap test can add. */
static int fits_in_address_space(const void *p, size_t bytes)
{
    return (uintptr_t)p <= UINTPTR_MAX - bytes;
}

static int overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

cudaError_t gpu_work_keep_busy(cudaStream_t stream, double milliseconds)
{
    if (!(milliseconds >= 0.0 && milliseconds <= GPU_WORK_MAX_BUSY_MS)) /* NaN too */
        return cudaErrorInvalidValue;
    unsigned long long nanoseconds = (unsigned long long)(milliseconds * 1e6 + 0.5);
    void *args[] = {&nanoseconds};
    return launch(KEEP_BUSY, 1, args, stream);
}

cudaError_t gpu_work_scale_add(cudaStream_t stream, float *d_y, const float *d_x, size_t n, float a,
                               float b)
{
    if (d_y == NULL || d_x == NULL || n == 0 || n > SIZE_MAX / sizeof(float))
        return cudaErrorInvalidValue;
    size_t bytes = n * sizeof(float);
    if (!fits_in_address_space(d_y, bytes) || !fits_in_address_space(d_x, bytes))
        return cudaErrorInvalidValue;
    if (d_y != d_x && overlap(d_y, bytes, d_x, bytes))
        return cudaErrorInvalidValue;
    void *args[] = {&d_y, &d_x, &n, &a, &b};
    return launch(SCALE_ADD, n, args, stream);
}

cudaError_t gpu_work_checksum(cudaStream_t stream, const void *d_data, size_t bytes,
                              unsigned passes, unsigned long long *d_sum)
{
    if (d_data == NULL || d_sum == NULL || bytes == 0 || bytes % 4 != 0 || passes == 0)
        return cudaErrorInvalidValue;
    if ((uintptr_t)d_data % 4 != 0 || (uintptr_t)d_sum % 8 != 0)
        return cudaErrorInvalidValue;
    if (!fits_in_address_space(d_data, bytes) || !fits_in_address_space(d_sum, sizeof *d_sum) ||
        overlap(d_sum, sizeof *d_sum, d_data, bytes))
        return cudaErrorInvalidValue;
    const unsigned int *d_words = d_data;
    size_t words = bytes / 4;
    void *zero_args[] = {&d_sum};
    cudaError_t err = launch(ZERO, 1, zero_args, stream);
    if (err != cudaSuccess)
        return err;
    void *sum_args[] = {&d_words, &words, &passes, &d_sum};
    return launch(CHECKSUM, words, sum_args, stream);
}

cudaError_t gpu_work_bytes_to_floats(cudaStream_t stream, float *d_out, const unsigned char *d_in,
                                     size_t n, float scale, float offset)
{
    if (d_out == NULL || d_in == NULL || n == 0 || n > SIZE_MAX / sizeof(float))
        return cudaErrorInvalidValue;
    if ((uintptr_t)d_out % sizeof(float) != 0)
        return cudaErrorInvalidValue;
    if (!fits_in_address_space(d_out, n * sizeof(float)) || !fits_in_address_space(d_in, n) ||
        overlap(d_out, n * sizeof(float), d_in, n))
        return cudaErrorInvalidValue;
    void *args[] = {&d_out, &d_in, &n, &scale, &offset};
    return launch(BYTES_TO_FLOATS, n, args, stream);
}

unsigned long long gpu_work_checksum_host(const void *h_data, size_t bytes, unsigned passes)
{
    const unsigned char *bytes_in = h_data;
    unsigned long long sum = 0;
    for (size_t at = 0; h_data != NULL && bytes - at >= 4; at += 4) {
        uint32_t word;
        memcpy(&word, bytes_in + at, sizeof word);
        sum += word;
    }
    return sum * passes; /* modulo 2^64, as `passes` rounds of additions would be */
}

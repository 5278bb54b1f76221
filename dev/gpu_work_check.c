/* gpu_work_check.c - the course's kernels (common/gpu_work.h) on this GPU, checked.
 *
 * `make test` runs it where there is a CUDA device (selftest/sections/45-kernels.sh).
 * Each check prints a line, "ok" or "FAIL", saying what was measured; the last
 * line is PASSED or FAILED. Exit status: 0 every check passed, 1 one failed,
 * 77 (the usual "skipped") the CUDA runtime cannot load kernels at all, as
 * with the stand-in runtime for machines without a GPU; it first checks that
 * every function then returns that runtime's refusal rather than anything else.
 */
#include "cuda_check.h"
#include "gpu_work.h"
#include "timing.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_KERNELS_UNAVAILABLE = 77 };
enum { POISON = 0xFF }; /* every float made of it is a NaN, never a result */

static int failures;

static void verdict(bool ok, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void verdict(bool ok, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    printf("%s  ", ok ? "ok  " : "FAIL");
    vprintf(format, args);
    printf("\n");
    va_end(args);
    failures += !ok;
}

static const char *describe(cudaError_t err)
{
    static char text[256];
    return cuda_error_describe(err, text, sizeof text);
}

/* Whether every byte of [buffer, buffer + bytes) is `value`. */
static bool all_bytes_are(const void *buffer, size_t bytes, unsigned char value)
{
    const unsigned char *p = buffer;
    for (size_t i = 0; i < bytes; i++)
        if (p[i] != value)
            return false;
    return true;
}

/* With a runtime that cannot load code, each function must pass the refusal on. */
static void check_unavailable(cudaError_t refusal)
{
    float *d_floats;
    unsigned long long *d_sum;
    CUDA_CHECK(cudaMalloc((void **)&d_floats, 64 * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&d_sum, sizeof *d_sum));
    cudaError_t busy = gpu_work_keep_busy(0, 1.0);
    cudaError_t scale = gpu_work_scale_add(0, d_floats, d_floats, 64, 2.0f, 1.0f);
    cudaError_t sum = gpu_work_checksum(0, d_floats, 64 * sizeof(float), 1, d_sum);
    verdict(busy == refusal && scale == refusal && sum == refusal,
            "the runtime cannot load kernels: %s; every function returns it "
            "(keep_busy %d, scale_add %d, checksum %d)",
            describe(refusal), (int)busy, (int)scale, (int)sum);
    CUDA_CHECK(cudaFree(d_floats));
    CUDA_CHECK(cudaFree(d_sum));
}

static void check_keep_busy(cudaStream_t stream)
{
    const double asked_ms = 50.0;
    event_timer timer;
    float measured_ms = 0;
    CUDA_CHECK(event_timer_create(&timer));
    /* Once first: the first launch in a context may load the kernel there. */
    cudaError_t err = gpu_work_keep_busy(stream, 0.0);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(event_timer_start(&timer, stream));
    double called_at = host_clock_ms();
    if (err == cudaSuccess)
        err = gpu_work_keep_busy(stream, asked_ms);
    double call_ms = host_clock_ms() - called_at;
    CUDA_CHECK(event_timer_stop(&timer, stream, &measured_ms));
    CUDA_CHECK(event_timer_destroy(&timer));
    if (err != cudaSuccess) {
        verdict(false, "gpu_work_keep_busy(stream, %.0f) failed: %s", asked_ms, describe(err));
        return;
    }
    double ratio = measured_ms / asked_ms;
    verdict(ratio >= 0.8 && ratio <= 3.0,
            "gpu_work_keep_busy(stream, %.0f) kept the stream busy %.1f ms by its events "
            "(%.2f times; 0.8 to 3 allowed)",
            asked_ms, measured_ms, ratio);
    verdict(call_ms < asked_ms / 2, "gpu_work_keep_busy returned after %.2f ms, without waiting",
            call_ms);
}

/* Deterministic floats of all signs and many exponents; no NaN. */
static float test_float(size_t i)
{
    uint32_t mixed = (uint32_t)i * 2654435761u;
    return (float)(mixed % 2000003u) / 7.0f - 140000.0f;
}

/* One size, out of place then in place, with poisoned floats past the end that must stay so. */
static void check_scale_add_size(cudaStream_t stream, size_t n)
{
    enum { GUARD = 64 };
    const float a = 1.7f, b = -0.3f;
    size_t bytes = (n + GUARD) * sizeof(float);
    float *h_x = malloc(bytes), *h_y = malloc(bytes), *d_x, *d_y;
    if (h_x == NULL || h_y == NULL) {
        verdict(false, "scale_add, %zu floats: out of host memory", n);
        free(h_x), free(h_y);
        return;
    }
    memset(h_x, POISON, bytes);
    for (size_t i = 0; i < n; i++)
        h_x[i] = test_float(i);
    CUDA_CHECK(cudaMalloc((void **)&d_x, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_y, bytes));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_y, POISON, bytes));

    const char *modes[] = {"out of place", "in place"};
    for (int in_place = 0; in_place < 2; in_place++) {
        float *d_out = in_place ? d_x : d_y;
        cudaError_t err = gpu_work_scale_add(stream, d_out, d_x, n, a, b);
        if (err == cudaSuccess)
            err = cudaStreamSynchronize(stream);
        if (err != cudaSuccess) {
            verdict(false, "scale_add, %zu floats %s: %s", n, modes[in_place], describe(err));
            continue;
        }
        CUDA_CHECK(cudaMemcpy(h_y, d_out, bytes, cudaMemcpyDeviceToHost));
        size_t wrong = n, i;
        for (i = 0; i < n && wrong == n; i++) {
            float want = fmaf(a, h_x[i], b);
            if (memcmp(&h_y[i], &want, sizeof want) != 0)
                wrong = i;
        }
        bool guard_kept = all_bytes_are(h_y + n, GUARD * sizeof(float), POISON);
        if (wrong < n)
            verdict(false, "scale_add, %zu floats %s: y[%zu] is %.9g, not fmaf(a, x, b) = %.9g", n,
                    modes[in_place], wrong, h_y[wrong], fmaf(a, h_x[wrong], b));
        else
            verdict(guard_kept, "scale_add, %zu floats %s: every one exact%s", n, modes[in_place],
                    guard_kept ? ", the poison past the end untouched"
                               : ", but it wrote past the end");
    }
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    free(h_x);
    free(h_y);
}

/* The host's conversion, the reference: two roundings, never fused. Two statements: C lets a
 * compiler fuse a multiply and an add only within one expression (clang's default), and GCC in
 * ISO C mode (-std=c11) fuses none. */
static float byte_to_float(unsigned char byte, float scale, float offset)
{
    const float product = (float)byte * scale;
    return product + offset;
}

/* Every byte value, then n pseudo-random ones, made into floats on the GPU and compared bit for
 * bit with the host's conversion; the floats past the end must keep their poison. */
static void check_bytes_to_floats_size(cudaStream_t stream, size_t n)
{
    enum { GUARD = 64 };
    const float scale = 1.0f / (255.0f * 0.25f), offset = -0.5f / 0.25f;
    const size_t out_bytes = (n + GUARD) * sizeof(float);
    unsigned char *h_in = malloc(n), *d_in;
    float *h_out = malloc(out_bytes), *d_out;
    if (h_in == NULL || h_out == NULL) {
        verdict(false, "bytes_to_floats, %zu bytes: out of host memory", n);
        free(h_in), free(h_out);
        return;
    }
    for (size_t i = 0; i < n; i++)
        h_in[i] = (unsigned char)(i < 256 ? i : ((uint32_t)i * 2654435761u) >> 24);
    CUDA_CHECK(cudaMalloc((void **)&d_in, n));
    CUDA_CHECK(cudaMalloc((void **)&d_out, out_bytes));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, POISON, out_bytes));
    cudaError_t err = gpu_work_bytes_to_floats(stream, d_out, d_in, n, scale, offset);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) {
        verdict(false, "bytes_to_floats, %zu bytes: %s", n, describe(err));
    } else {
        CUDA_CHECK(cudaMemcpy(h_out, d_out, out_bytes, cudaMemcpyDeviceToHost));
        size_t wrong = n;
        for (size_t i = 0; i < n && wrong == n; i++) {
            const float want = byte_to_float(h_in[i], scale, offset);
            if (memcmp(&h_out[i], &want, sizeof want) != 0)
                wrong = i;
        }
        const bool guard_kept = all_bytes_are(h_out + n, GUARD * sizeof(float), POISON);
        if (wrong < n)
            verdict(false, "bytes_to_floats, %zu bytes: out[%zu] is %.9g, not the host's %.9g", n,
                    wrong, h_out[wrong], byte_to_float(h_in[wrong], scale, offset));
        else
            verdict(guard_kept, "bytes_to_floats, %zu bytes: every float has the host's bits%s", n,
                    guard_kept ? ", the poison past the end untouched"
                               : ", but it wrote past the end");
    }
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
}

/* Runs the checksum of d_data, `passes` times, and compares it with the host's. */
static void check_checksum_of(cudaStream_t stream, const char *what, const void *d_data,
                              const void *h_same, size_t bytes, unsigned passes)
{
    unsigned long long *d_sum, got = 0;
    CUDA_CHECK(cudaMalloc((void **)&d_sum, sizeof *d_sum));
    CUDA_CHECK(cudaMemset(d_sum, POISON, sizeof *d_sum));
    cudaError_t err = gpu_work_checksum(stream, d_data, bytes, passes, d_sum);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream);
    if (err == cudaSuccess)
        CUDA_CHECK(cudaMemcpy(&got, d_sum, sizeof got, cudaMemcpyDeviceToHost));
    unsigned long long want = gpu_work_checksum_host(h_same, bytes, passes);
    if (err != cudaSuccess)
        verdict(false, "checksum of %zu bytes of %s, %u passes: %s", bytes, what, passes,
                describe(err));
    else
        verdict(got == want, "checksum of %zu bytes of %s, %u passes: %#llx (the host's: %#llx)",
                bytes, what, passes, got, want);
    CUDA_CHECK(cudaFree(d_sum));
}

static void check_checksum(cudaStream_t stream)
{
    const size_t bytes = ((size_t)1 << 24) + 12; /* an odd number of words */
    uint32_t *h_words = malloc(bytes), *h_mapped, *d_words, *d_mapped;
    if (h_words == NULL) {
        verdict(false, "checksum: out of host memory");
        return;
    }
    uint32_t state = 12345;
    for (size_t i = 0; i < bytes / 4; i++)
        h_words[i] = state = state * 1664525u + 1013904223u;

    CUDA_CHECK(cudaMalloc((void **)&d_words, bytes));
    CUDA_CHECK(cudaMemcpy(d_words, h_words, bytes, cudaMemcpyHostToDevice));
    check_checksum_of(stream, "device memory", d_words, h_words, bytes, 1);
    check_checksum_of(stream, "device memory", d_words, h_words, bytes, 3);
    CUDA_CHECK(cudaFree(d_words));

    CUDA_CHECK(cudaHostAlloc((void **)&h_mapped, bytes, cudaHostAllocMapped));
    memcpy(h_mapped, h_words, bytes);
    CUDA_CHECK(cudaHostGetDevicePointer((void **)&d_mapped, h_mapped, 0));
    check_checksum_of(stream, "mapped pinned host memory", d_mapped, h_words, bytes, 1);
    check_checksum_of(stream, "mapped pinned host memory", d_mapped, h_words, bytes, 2);
    CUDA_CHECK(cudaFreeHost(h_mapped));
    free(h_words);
}

/* What the harness does to catch a read before synchronising: hold the stream up, queue the
 * copy behind it, and look at the destination while the copy cannot have happened yet. */
static void check_delayed_copy(cudaStream_t stream)
{
    const size_t bytes = (size_t)16 << 20;
    const double delay_ms = 200.0;
    unsigned char *d_src, *h_dst;
    CUDA_CHECK(cudaMalloc((void **)&d_src, bytes));
    CUDA_CHECK(cudaMemset(d_src, 0x5A, bytes));
    CUDA_CHECK(cudaMallocHost((void **)&h_dst, bytes));
    memset(h_dst, POISON, bytes);
    CUDA_CHECK(cudaDeviceSynchronize());

    cudaError_t err = gpu_work_keep_busy(stream, delay_ms);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_dst, d_src, bytes, cudaMemcpyDeviceToHost, stream);
    bool poison_before = all_bytes_are(h_dst, bytes, POISON);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream);
    bool data_after = all_bytes_are(h_dst, bytes, 0x5A);
    if (err != cudaSuccess)
        verdict(false, "a copy queued behind gpu_work_keep_busy: %s", describe(err));
    else
        verdict(poison_before && data_after,
                "a stream held up %.0f ms by gpu_work_keep_busy, then a copy to pinned memory: "
                "before synchronising the host read %s, after it %s",
                delay_ms, poison_before ? "poison" : "something else (the copy was not held up)",
                data_after ? "the data" : "something else (the copy did not arrive)");
    CUDA_CHECK(cudaFree(d_src));
    CUDA_CHECK(cudaFreeHost(h_dst));
}

int main(void)
{
    cudaError_t loaded = gpu_work_load();
    if (loaded == cudaErrorNotSupported) {
        check_unavailable(loaded);
        printf("%s\n", failures ? "FAILED" : "SKIPPED: this CUDA runtime runs no kernels");
        return failures ? EXIT_FAILURE : EXIT_KERNELS_UNAVAILABLE;
    }
    verdict(loaded == cudaSuccess, "the kernels load: %s", describe(loaded));
    if (loaded != cudaSuccess) {
        printf("FAILED\n");
        return EXIT_FAILURE;
    }
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    check_keep_busy(stream);
    const size_t sizes[] = {1, 7, 255, 257, 1000003}; /* the last one past the grid */
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        check_scale_add_size(stream, sizes[i]);
    check_checksum(stream);
    const size_t byte_sizes[] = {256, 1001,
                                 196608 * 3 + 5}; /* every value; ragged; past the grid */
    for (size_t i = 0; i < sizeof byte_sizes / sizeof byte_sizes[0]; i++)
        check_bytes_to_floats_size(stream, byte_sizes[i]);
    check_delayed_copy(stream);
    CUDA_CHECK(cudaStreamDestroy(stream));
    if (failures)
        printf("FAILED: %d check%s\n", failures, failures == 1 ? "" : "s");
    else
        printf("PASSED\n");
    return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}

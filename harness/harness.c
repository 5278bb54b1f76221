/* harness.c - helpers for test bodies: buffers, poison, comparisons, trace checks. */
#include "harness.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUDA_CHECK failing in a test's own set-up is the harness's problem, not the
 * learner's: say so, so nobody hunts for a bug in correct code. */
static void fail_the_test(cudaError_t err, const char *expr, const char *file, int line)
{
    ck_abort_msg("the test's own CUDA call %s failed at %s:%d with %s; if your code ran just "
                 "before, it may have left the GPU in an error state",
                 expr, file, line, error_text(err));
}

void course_test_begin(void)
{
    cuda_check_set_handler(fail_the_test);
    trace_start(); /* clears what an earlier test left */
    trace_stop();
}

void course_test_end(void)
{
    exit(COURSE_TEST_COMPLETED);
}

const char *error_text(cudaError_t err)
{
    static char text[256];
    return cuda_error_describe(err, text, sizeof text);
}

void poison_host(void *h_buffer, size_t bytes)
{
    memset(h_buffer, POISON_BYTE, bytes);
}

void poison_device(void *d_buffer, size_t bytes)
{
    CUDA_CHECK(cudaMemset(d_buffer, POISON_BYTE, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
}

void *harness_host_alloc(size_t bytes)
{
    void *h_buffer = malloc(bytes);
    ck_assert_msg(h_buffer != NULL, "the test could not allocate %zu bytes of host memory", bytes);
    poison_host(h_buffer, bytes);
    return h_buffer;
}

void *harness_device_alloc(size_t bytes)
{
    void *d_buffer = NULL;
    CUDA_CHECK(cudaMalloc(&d_buffer, bytes));
    poison_device(d_buffer, bytes);
    return d_buffer;
}

void harness_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
}

void fill_floats(float *h_values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h_values[i] = 1.0f + (float)(i % (1u << 22)) / 4.0f;
}

bool holds_only_poison(const void *buffer, size_t count)
{
    const unsigned char *bytes = buffer;
    for (size_t i = 0; i < count; i++)
        if (bytes[i] != POISON_BYTE)
            return false;
    return true;
}

size_t first_differing_byte(const void *got, const void *want, size_t bytes)
{
    const unsigned char *g = got, *w = want;
    size_t first = 0;
    while (first < bytes && g[first] == w[first])
        first++;
    return first;
}

bool describe_float_mismatch(const float *got, const float *want, size_t n, const char *what,
                             char *message, size_t size)
{
    const size_t element = sizeof(float);
    const unsigned char *got_bytes = (const unsigned char *)got;
    size_t total = n * element, first_wrong = first_differing_byte(got, want, total);
    if (first_wrong == total)
        return false;

    size_t arrived = first_wrong / element; /* whole floats before the first wrong byte */
    if (holds_only_poison(got_bytes + first_wrong, total - first_wrong)) {
        if (first_wrong == 0)
            snprintf(message, size,
                     "none of the %zu floats of %s arrived: every byte still holds the test's "
                     "poison (0x%02X), so nothing was copied into this buffer",
                     n, what, POISON_BYTE);
        else if (first_wrong == n)
            snprintf(message, size,
                     "only the first %zu of %zu floats of %s arrived, the rest still hold the "
                     "test's poison: exactly %zu bytes were copied. cudaMemcpy's count is in "
                     "bytes, so pass n * sizeof(float), not n",
                     arrived, n, what, n);
        else
            snprintf(message, size,
                     "only the first %zu of %zu floats of %s arrived (%zu bytes), the rest still "
                     "hold the test's poison: the copy's byte count is short",
                     arrived, n, what, first_wrong);
        return true;
    }
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += memcmp(&got[i], &want[i], element) != 0;
    snprintf(message, size,
             "%zu of the %zu floats of %s are wrong; the first is element %zu, which is %g where "
             "%g was expected",
             wrong, n, what, arrived, (double)got[arrived], (double)want[arrived]);
    return true;
}

void expect_floats_arrived(const float *got, const float *want, size_t n, const char *what)
{
    char message[512];
    if (describe_float_mismatch(got, want, n, what, message, sizeof message))
        ck_abort_msg("%s", message);
}

void expect_everything_freed(const char *function_name)
{
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *allocation = trace_get(i);
        if (allocation->result != cudaSuccess || allocation->allocated == NULL)
            continue;
        traced_function release = allocation->function == TRACED_cudaMalloc ? TRACED_cudaFree
                                  : (allocation->function == TRACED_cudaMallocHost ||
                                     allocation->function == TRACED_cudaHostAlloc)
                                      ? TRACED_cudaFreeHost
                                      : TRACED_FUNCTION_COUNT;
        if (release == TRACED_FUNCTION_COUNT)
            continue;
        bool freed = false;
        for (size_t j = i + 1; j < trace_count() && !freed; j++) {
            const traced_call *later = trace_get(j);
            freed = later->function == release && later->dst == allocation->allocated;
        }
        ck_assert_msg(freed,
                      "%s allocated %zu bytes with %s and returned without %s on that pointer: "
                      "every allocation needs its free, on the error paths too",
                      function_name, allocation->bytes, traced_function_name(allocation->function),
                      traced_function_name(release));
    }
}

const char *trace_summary(void)
{
    static char summary[4096];
    size_t used = 0;
    summary[0] = '\0';
    for (size_t i = 0; i < trace_count() && used < sizeof summary - 128; i++) {
        const traced_call *call = trace_get(i);
        int written = snprintf(summary + used, sizeof summary - used, "\n  %zu. %s", i + 1,
                               traced_function_name(call->function));
        used += written > 0 ? (size_t)written : 0;
        if (call->function == TRACED_cudaMemcpy || call->function == TRACED_cudaMemcpyAsync)
            written = snprintf(summary + used, sizeof summary - used, "(%zu bytes, %s: %s to %s)",
                               call->bytes, memcpy_kind_name(call->kind),
                               memory_location_name(call->src_location),
                               memory_location_name(call->dst_location));
        else if (call->bytes)
            written = snprintf(summary + used, sizeof summary - used, "(%zu bytes)", call->bytes);
        else
            written = 0;
        used += written > 0 ? (size_t)written : 0;
        written = snprintf(summary + used, sizeof summary - used, " -> %s%s",
                           cudaGetErrorName(call->result),
                           call->injected ? " (injected by the test)" : "");
        used += written > 0 ? (size_t)written : 0;
    }
    if (trace_count() == 0)
        snprintf(summary, sizeof summary, " none");
    return summary;
}

static const char *direction_words(enum cudaMemcpyKind kind)
{
    switch (kind) {
    case cudaMemcpyHostToDevice: return "from host to device";
    case cudaMemcpyDeviceToHost: return "from device to host";
    case cudaMemcpyDeviceToDevice: return "from device to device";
    case cudaMemcpyHostToHost: return "from host to host";
    default: return "in the direction its pointers say";
    }
}

const char *describe_kind_mismatch(size_t nth, const char *what, const traced_call *call)
{
    static char sentence[512];
    snprintf(sentence, sizeof sentence,
             "cudaMemcpy number %zu%s%s%s copies from %s to %s but says %s: the kind must name the "
             "direction the data moves, here %s (or cudaMemcpyDefault, which infers it)",
             nth, what ? " (" : "", what ? what : "", what ? ")" : "",
             memory_location_name(call->src_location), memory_location_name(call->dst_location),
             memcpy_kind_name(call->kind),
             memcpy_kind_name(memcpy_kind_for(call->dst_location, call->src_location)));
    return sentence;
}

void expect_memcpy(size_t nth, size_t expected_bytes, size_t element_size,
                   enum cudaMemcpyKind expected_direction, const char *what)
{
    const traced_call *call = trace_nth(TRACED_cudaMemcpy, nth);
    ck_assert_msg(call != NULL,
                  "expected cudaMemcpy number %zu (%s), but only %zu were made. The calls were:%s",
                  nth, what, trace_count_of(TRACED_cudaMemcpy), trace_summary());
    if (call->bytes != expected_bytes) {
        if (element_size > 1 && call->bytes * element_size == expected_bytes)
            ck_abort_msg("cudaMemcpy number %zu (%s) was asked for %zu bytes, which is the "
                         "number of elements: cudaMemcpy's count is in bytes, so pass "
                         "n * sizeof(element) = %zu",
                         nth, what, call->bytes, expected_bytes);
        ck_abort_msg("cudaMemcpy number %zu (%s) was asked for %zu bytes; it should move %zu", nth,
                     what, call->bytes, expected_bytes);
    }
    enum cudaMemcpyKind actual = memcpy_kind_for(call->dst_location, call->src_location);
    ck_assert_msg(actual == expected_direction,
                  "cudaMemcpy number %zu (%s) copies from %s to %s, but this copy should go %s: "
                  "the destination is the first argument, the source the second",
                  nth, what, memory_location_name(call->src_location),
                  memory_location_name(call->dst_location), direction_words(expected_direction));
    ck_assert_msg(call->kind == actual || call->kind == cudaMemcpyDefault, "%s",
                  describe_kind_mismatch(nth, what, call));
}

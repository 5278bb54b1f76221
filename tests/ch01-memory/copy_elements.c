/* copy_elements.c - tests for exercises/ch01-memory/copy_elements.c (copy_elements). */
#include "harness.h"
#include "copy_elements.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

COURSE_EXERCISE(
    "Copy elements: the byte count, computed safely",
    "The work is one cudaMemcpy; the exercise is its byte count. Before you multiply count by "
    "element_size, think about what each argument may be: zero, NULL, or so large that the "
    "product does not fit in a size_t (section 1.4). How can you tell that the product would "
    "wrap around without computing it?\n\n"
    "In this order: if count or element_size is 0, return cudaSuccess; if dst or src is NULL, "
    "return cudaErrorInvalidValue; if count > SIZE_MAX / element_size, the product would wrap "
    "around, so return cudaErrorInvalidValue; otherwise return cudaMemcpy(dst, src, count * "
    "element_size, kind). Compare with the division before you multiply: once the product has "
    "wrapped, it looks like any small number.");
COURSE_EXERCISE_WORK_QUEUES(1);

enum { COUNT = 1000 };

/* The copy the learner's code makes; the test owns both ends. */
static cudaError_t run_copy(void *dst, const void *src, size_t count, size_t element_size,
                            enum cudaMemcpyKind kind)
{
    cudaError_t err;
    trace_start(); /* each call gets a trace of its own */
    trace_stop();
    TRACED_RUN(err = copy_elements(dst, src, count, element_size, kind));
    return err;
}

static void expect_one_copy(cudaError_t err, size_t element_size, enum cudaMemcpyKind kind,
                            const char *what)
{
    ck_assert_msg(err == cudaSuccess,
                  "copy_elements(%s, %d elements of %zu bytes, %s) returned %s. The calls it "
                  "made were:%s",
                  what, COUNT, element_size, memcpy_kind_name(kind), error_text(err),
                  trace_summary());
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 1,
                  "copy_elements made %zu cudaMemcpy calls for %d elements of %zu bytes; one "
                  "copy of all their bytes is the whole job. The calls:%s",
                  trace_count_of(TRACED_cudaMemcpy), COUNT, element_size, trace_summary());
    char description[160];
    snprintf(description, sizeof description, "%d elements of %zu bytes, %s", COUNT, element_size,
             what);
    expect_memcpy(1, COUNT * element_size, element_size, kind, description);
}

static void copy_up_and_check(size_t element_size)
{
    const size_t bytes = COUNT * element_size;
    unsigned char *h_src = harness_host_alloc(bytes);
    fill_bytes(h_src, bytes);
    void *d_dst = harness_device_alloc(bytes);
    cudaError_t err = run_copy(d_dst, h_src, COUNT, element_size, cudaMemcpyHostToDevice);
    expect_one_copy(err, element_size, cudaMemcpyHostToDevice, "h_src to d_dst");

    unsigned char *h_back = harness_private_alloc(bytes);
    harness_copy(h_back, d_dst, bytes, cudaMemcpyDeviceToHost);
    char what[96];
    snprintf(what, sizeof what, "the %d elements of %zu bytes", COUNT, element_size);
    expect_bytes_arrived(h_back, h_src, bytes, element_size, what);
    harness_host_free(h_src);
    harness_host_free(h_back);
}

COURSE_TEST(elements_of_1_2_4_and_8_bytes_arrive_whole_on_the_device, 4)
{
    static const size_t sizes[] = {1, 2, 4, 8};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        copy_up_and_check(sizes[s]);
}

typedef struct point {
    float x, y, z;
} point;
_Static_assert(sizeof(point) == 12, "a point is three floats, no padding");

COURSE_TEST(an_array_of_12_byte_structs_arrives_whole_on_the_host, 3)
{
    const size_t bytes = COUNT * sizeof(point);
    point *h_src = harness_host_alloc(bytes);
    fill_floats((float *)h_src, 3 * COUNT);
    point *d_src = harness_device_alloc(bytes);
    harness_copy(d_src, h_src, bytes, cudaMemcpyHostToDevice);
    point *h_dst = harness_host_alloc(bytes);

    cudaError_t err = run_copy(h_dst, d_src, COUNT, sizeof(point), cudaMemcpyDeviceToHost);
    expect_one_copy(err, sizeof(point), cudaMemcpyDeviceToHost, "d_src to h_dst");
    expect_bytes_arrived(h_dst, h_src, bytes, sizeof(point), "the 1000 points of 12 bytes");
}

/* In the tests below nothing should reach cudaMemcpy; if something does, the
 * test makes that call fail before it reaches the runtime, so a wrong byte
 * count cannot scribble over memory. */
#define STOPPED_ERROR cudaErrorIllegalAddress

/* copy_elements under the trace, its first cudaMemcpy answered with `answer` and never
 * performed (an injected cudaSuccess records a copy that does not happen). */
static cudaError_t run_answered(void *dst, const void *src, size_t count, size_t element_size,
                                cudaError_t answer)
{
    cudaError_t err;
    trace_start();
    trace_stop();
    trace_inject_failure(TRACED_cudaMemcpy, 1, answer);
    TRACED_RUN(err = copy_elements(dst, src, count, element_size, cudaMemcpyHostToDevice));
    return err;
}

static cudaError_t run_guarded(void *dst, const void *src, size_t count, size_t element_size)
{
    return run_answered(dst, src, count, element_size, STOPPED_ERROR);
}

COURSE_TEST(a_byte_count_that_overflows_is_rejected_without_copying, 3)
{
    const size_t half_width = (size_t)1 << (sizeof(size_t) * 4); /* 2^32 for a 64-bit size_t */
    static const char *const comments[] = {
        "wraps around to 4 bytes", "wraps around to 8 bytes", "wraps around to exactly 0",
        "wraps around to SIZE_MAX - 1", "wraps around to more than either factor"};
    const struct {
        size_t count, element_size;
    } cases[] = {{SIZE_MAX / 4 + 2, 4},
                 {SIZE_MAX / 12 + 1, 12},
                 {half_width, half_width},
                 {SIZE_MAX, 2},
                 {2 * half_width + 1, half_width / 2 + 1}};
    void *h_dst = harness_host_alloc(64), *h_src = harness_host_alloc(64);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t count = cases[c].count, size = cases[c].element_size;
        const size_t wrapped = count * size; /* what an unchecked product gives */
        cudaError_t err = run_guarded(h_dst, h_src, count, size);
        const traced_call *copy = trace_nth(TRACED_cudaMemcpy, 1);
        ck_assert_msg(copy == NULL,
                      "copy_elements(dst, src, %zu, %zu, ...) called cudaMemcpy with %zu bytes: "
                      "%zu * %zu is larger than SIZE_MAX, and size_t arithmetic silently "
                      "wraps around (here to %zu), which would copy the wrong amount.%s Check "
                      "count > SIZE_MAX / element_size before multiplying, and return "
                      "cudaErrorInvalidValue (the test stopped that cudaMemcpy before it ran)",
                      count, size, copy ? copy->bytes : 0, count, size, wrapped,
                      wrapped > count && wrapped > size
                          ? " A product that wrapped can still be larger than both factors, so "
                            "comparing it with them does not reveal the overflow."
                          : "");
        ck_assert_msg(err == cudaErrorInvalidValue,
                      "copy_elements(dst, src, %zu, %zu, ...) returned %s: %zu * %zu does not "
                      "fit in a size_t (the product %s), so the request is invalid; return "
                      "cudaErrorInvalidValue",
                      count, size, error_text(err), count, size, comments[c]);
    }
}

/* Byte counts past what an int or a 32-bit unsigned holds, that a size_t holds easily. The
 * test answers the copy with cudaSuccess without performing it, so it allocates nothing. */
COURSE_TEST(a_copy_of_more_than_2_GiB_is_not_refused_when_its_byte_count_fits, 2)
{
    const struct {
        size_t count, element_size;
        const char *size_text;
    } cases[] = {{((size_t)1 << 31) + 1, 1, "2 GiB and 1 byte"},
                 {((size_t)1 << 30) + 1, 4, "4 GiB and 4 bytes"},
                 {((size_t)1 << 29) + 1, 12, "6 GiB and 12 bytes"}};
    void *h_src = harness_host_alloc(64), *d_dst = harness_device_alloc(64);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t count = cases[c].count, size = cases[c].element_size;
        cudaError_t err = run_answered(d_dst, h_src, count, size, cudaSuccess);
        const traced_call *copy = trace_nth(TRACED_cudaMemcpy, 1);
        ck_assert_msg(copy != NULL,
                      "copy_elements(dst, src, %zu, %zu, ...) returned %s without calling "
                      "cudaMemcpy: %zu * %zu bytes is %s, more than an int or a 32-bit "
                      "unsigned holds, yet far below SIZE_MAX. Reject only what does not fit "
                      "in a size_t: count > SIZE_MAX / element_size",
                      count, size, error_text(err), count, size, cases[c].size_text);
        ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 1,
                      "copy_elements(dst, src, %zu, %zu, ...) made %zu cudaMemcpy calls; one "
                      "copy of all %s is the whole job. The calls:%s",
                      count, size, trace_count_of(TRACED_cudaMemcpy), cases[c].size_text,
                      trace_summary());
        ck_assert_msg(copy->bytes == count * size,
                      "copy_elements(dst, src, %zu, %zu, ...) asked cudaMemcpy for %zu bytes "
                      "where %zu * %zu = %zu (%s) were due: compute the byte count in size_t, "
                      "not in a narrower type that cuts it short",
                      count, size, copy->bytes, count, size, count * size, cases[c].size_text);
        ck_assert_msg(err == cudaSuccess,
                      "copy_elements(dst, src, %zu, %zu, ...) returned %s, but its cudaMemcpy "
                      "returned cudaSuccess: return what cudaMemcpy returns",
                      count, size, error_text(err));
    }
}

COURSE_TEST(a_NULL_pointer_is_rejected_when_there_is_something_to_copy, 3)
{
    void *h_dst = harness_host_alloc(64), *h_src = harness_host_alloc(64);
    const struct {
        void *dst;
        const void *src;
        const char *call, *null_side;
    } cases[] = {{NULL, h_src, "copy_elements(NULL, src, 16, 4, ...)", "destination"},
                 {h_dst, NULL, "copy_elements(dst, NULL, 16, 4, ...)", "source"},
                 {NULL, NULL, "copy_elements(NULL, NULL, 16, 4, ...)", "destination"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cudaError_t err = run_guarded(cases[c].dst, cases[c].src, 16, 4);
        ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 0,
                      "%s passed a NULL %s pointer on to cudaMemcpy: check dst and src yourself "
                      "and return cudaErrorInvalidValue, rather than hoping the runtime will "
                      "notice (the test stopped that cudaMemcpy before it ran)",
                      cases[c].call, cases[c].null_side);
        ck_assert_msg(err == cudaErrorInvalidValue,
                      "%s returned %s: with 64 bytes to copy, a NULL pointer is an invalid "
                      "argument; return cudaErrorInvalidValue",
                      cases[c].call, error_text(err));
    }
}

COURSE_TEST(copying_zero_elements_succeeds_and_calls_nothing_whatever_the_pointers, 2)
{
    void *h_dst = harness_host_alloc(64), *h_src = harness_host_alloc(64);
    const struct {
        void *dst;
        const void *src;
        const char *call;
    } cases[] = {{h_dst, h_src, "copy_elements(dst, src, 0, 4, ...)"},
                 {NULL, NULL, "copy_elements(NULL, NULL, 0, 4, ...)"},
                 {NULL, h_src, "copy_elements(NULL, src, 0, 4, ...)"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cudaError_t err = run_guarded(cases[c].dst, cases[c].src, 0, 4);
        ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 0,
                      "%s called cudaMemcpy: with nothing to copy, return cudaSuccess at once, "
                      "before looking at the pointers",
                      cases[c].call);
        ck_assert_msg(err == cudaSuccess,
                      "%s returned %s: copying zero elements is not an error, it is an empty "
                      "copy; return cudaSuccess",
                      cases[c].call, error_text(err));
    }
}

COURSE_TEST(elements_of_zero_bytes_make_an_empty_copy_not_a_division_by_zero, 1)
{
    void *h_dst = harness_host_alloc(64), *h_src = harness_host_alloc(64);
    cudaError_t err = run_guarded(h_dst, h_src, 16, 0);
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 0,
                  "copy_elements(dst, src, 16, 0, ...) called cudaMemcpy: 16 elements of 0 "
                  "bytes are 0 bytes, nothing to copy");
    ck_assert_msg(err == cudaSuccess,
                  "copy_elements(dst, src, 16, 0, ...) returned %s: 16 elements of 0 bytes are "
                  "an empty copy; return cudaSuccess (and test element_size for 0 before "
                  "dividing SIZE_MAX by it)",
                  error_text(err));
}

COURSE_TEST(an_error_from_cudaMemcpy_is_returned, 2)
{
    void *h_dst = harness_host_alloc(64), *h_src = harness_host_alloc(64);
    trace_start();
    trace_stop();
    trace_inject_failure(TRACED_cudaMemcpy, 1, cudaErrorLaunchFailure);
    cudaError_t err;
    TRACED_RUN(err = copy_elements(h_dst, h_src, 16, 4, cudaMemcpyHostToHost));
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 1,
                  "copy_elements(dst, src, 16, 4, cudaMemcpyHostToHost) made %zu cudaMemcpy "
                  "calls; it should make one. The calls:%s",
                  trace_count_of(TRACED_cudaMemcpy), trace_summary());
    ck_assert_msg(err == cudaErrorLaunchFailure,
                  "the test made cudaMemcpy fail with cudaErrorLaunchFailure, but copy_elements "
                  "returned %s: return what cudaMemcpy returns",
                  error_text(err));
}

/* directions.c - tests for exercises/ch01-memory/directions.c (copy_four_ways). */
#include "harness.h"
#include "directions.h"

#include <stdio.h>

COURSE_EXERCISE(
    "Host to device, device to device, device to host, host to host",
    "Four copies in a chain, one per direction, each naming where its destination and its "
    "source live (the kind). Section 1.3 shows why the kind must be right even where the "
    "runtime would let a wrong one pass. Stop at the first copy that fails.\n\n"
    "One cudaMemcpy per direction, destination first: cudaMemcpy(d_a, h_src, bytes, "
    "cudaMemcpyHostToDevice); cudaMemcpy(d_b, d_a, bytes, cudaMemcpyDeviceToDevice); "
    "cudaMemcpy(h_mid, d_b, bytes, cudaMemcpyDeviceToHost); cudaMemcpy(h_dst, h_mid, bytes, "
    "cudaMemcpyHostToHost), where bytes is n * sizeof(float). The kind must match where the "
    "pointers live even when the runtime would let a wrong one pass. Keep each result, and "
    "return at the first that is not cudaSuccess.");
COURSE_EXERCISE_WORK_QUEUES(1);

enum { N = 1024 };

/* The four copies in order, and the kind that names each one's direction. */
static const char *const copy_names[] = {"h_src to d_a", "d_a to d_b", "d_b to h_mid",
                                         "h_mid to h_dst"};
static const enum cudaMemcpyKind named_kinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToDevice,
                                                  cudaMemcpyDeviceToHost, cudaMemcpyHostToHost};

typedef struct chain {
    float *h_src, *d_a, *d_b, *h_mid, *h_dst;
} chain;

/* Allocates the five buffers, every destination poisoned, h_src filled. */
static chain make_chain(bool pinned)
{
    const size_t bytes = N * sizeof(float);
    chain c;
    c.h_src = pinned ? harness_pinned_alloc(bytes) : harness_host_alloc(bytes);
    c.d_a = harness_device_alloc(bytes);
    c.d_b = harness_device_alloc(bytes);
    c.h_mid = pinned ? harness_pinned_alloc(bytes) : harness_host_alloc(bytes);
    c.h_dst = pinned ? harness_pinned_alloc(bytes) : harness_host_alloc(bytes);
    fill_floats(c.h_src, N);
    return c;
}

static cudaError_t run_chain(const chain *c)
{
    cudaError_t err;
    TRACED_RUN(err = copy_four_ways(c->h_src, c->d_a, c->d_b, c->h_mid, c->h_dst, N));
    return err;
}

static void expect_success(cudaError_t err)
{
    ck_assert_msg(err == cudaSuccess, "copy_four_ways returned %s.%s The calls it made were:%s",
                  error_text(err), kind_mismatch_note(), trace_summary());
}

static const char *name_of(const chain *c, const void *ptr)
{
    return ptr == c->h_src   ? "h_src"
           : ptr == c->d_a   ? "d_a"
           : ptr == c->d_b   ? "d_b"
           : ptr == c->h_mid ? "h_mid"
           : ptr == c->h_dst ? "h_dst"
           : ptr == NULL     ? "NULL"
                             : "a pointer that is none of the five";
}

/* " Copy number 2 copies d_b into d_a, ..." when a copy of the chain runs backwards; else "". */
static const char *reversed_copy_note(const chain *c)
{
    static char note[256];
    const void *const ends[4][2] = {
        {c->d_a, c->h_src}, {c->d_b, c->d_a}, {c->h_mid, c->d_b}, {c->h_dst, c->h_mid}};
    note[0] = '\0';
    for (size_t n = 1; n <= 4; n++) {
        const traced_call *call = trace_nth(TRACED_cudaMemcpy, n);
        if (call != NULL && call->dst == ends[n - 1][1] && call->src == ends[n - 1][0]) {
            snprintf(note, sizeof note,
                     ". Copy number %zu copies %s into %s, the reverse of %s into %s: "
                     "cudaMemcpy's destination is its first argument, the source its second",
                     n, name_of(c, call->src), name_of(c, call->dst), name_of(c, call->dst),
                     name_of(c, call->src));
            break;
        }
    }
    return note;
}

static void expect_all_arrived(const chain *c)
{
    char message[768];
    if (describe_float_mismatch(c->h_mid, c->h_src, N, "h_mid, after the copy down from d_b",
                                message, sizeof message) ||
        describe_float_mismatch(c->h_dst, c->h_src, N, "h_dst, after the last copy", message,
                                sizeof message))
        ck_abort_msg("%s%s", message, reversed_copy_note(c));
}

static void expect_four_directions(void)
{
    const size_t bytes = N * sizeof(float);
    expect_memcpy(1, bytes, sizeof(float), cudaMemcpyHostToDevice, "the first, h_src to d_a");
    expect_memcpy(2, bytes, sizeof(float), cudaMemcpyDeviceToDevice, "the second, d_a to d_b");
    expect_memcpy(3, bytes, sizeof(float), cudaMemcpyDeviceToHost, "the third, d_b to h_mid");
    expect_memcpy(4, bytes, sizeof(float), cudaMemcpyHostToHost,
                  "the fourth, h_mid to h_dst, with cudaMemcpy too");
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 4,
                  "copy_four_ways made %zu cudaMemcpy calls; the four directions need four. "
                  "The calls:%s",
                  trace_count_of(TRACED_cudaMemcpy), trace_summary());
}

COURSE_TEST(the_floats_arrive_in_both_host_destinations, 4)
{
    chain c = make_chain(false);
    expect_success(run_chain(&c));
    expect_all_arrived(&c);
}

COURSE_TEST(the_copies_go_host_to_device_device_to_device_device_to_host_host_to_host, 4)
{
    chain c = make_chain(false);
    run_chain(&c);
    expect_four_directions();
}

/* cudaMemcpyDefault moves the data right (the runtime infers the direction from the
 * pointers), so only the kind itself shows whether each direction was named as asked. */
static void expect_named_kinds(void)
{
    for (size_t nth = 1; nth <= 4; nth++) {
        const traced_call *call = trace_nth(TRACED_cudaMemcpy, nth);
        if (call == NULL || call->kind == named_kinds[nth - 1])
            continue;
        ck_abort_msg("copy number %zu (%s) says %s where this exercise asks for the kind that "
                     "names its direction, %s: cudaMemcpyDefault lets the runtime infer the "
                     "direction, which works, but here the point is to say each one yourself",
                     nth, copy_names[nth - 1], memcpy_kind_name(call->kind),
                     memcpy_kind_name(named_kinds[nth - 1]));
    }
}

/* With pinned host memory the runtime can reach both ends whatever the kind says,
 * so a wrong kind goes unnoticed there, until the same code meets pageable memory. */
COURSE_TEST(each_kind_names_its_direction_even_on_pinned_memory_where_a_wrong_one_works, 3)
{
    chain c = make_chain(true);
    expect_success(run_chain(&c));
    expect_all_arrived(&c);
    expect_four_directions();
    expect_named_kinds();
}

static void expect_copy(const chain *c, size_t nth, const void *dst, const void *src)
{
    const traced_call *call = trace_nth(TRACED_cudaMemcpy, nth);
    ck_assert_msg(call != NULL,
                  "copy_four_ways made %zu cudaMemcpy calls; copy number %zu should copy %s into "
                  "%s. The calls:%s",
                  trace_count_of(TRACED_cudaMemcpy), nth, name_of(c, src), name_of(c, dst),
                  trace_summary());
    ck_assert_msg(call->src == src,
                  "copy number %zu reads from %s where it should read from %s: each copy starts "
                  "where the one before it ended (cudaMemcpy's source is its second argument)",
                  nth, name_of(c, call->src), name_of(c, src));
    ck_assert_msg(call->dst == dst,
                  "copy number %zu writes into %s where it should write into %s (cudaMemcpy's "
                  "destination is its first argument)",
                  nth, name_of(c, call->dst), name_of(c, dst));
}

COURSE_TEST(each_copy_reads_the_buffer_that_the_copy_before_it_wrote, 2)
{
    chain c = make_chain(false);
    expect_success(run_chain(&c));
    expect_copy(&c, 1, c.d_a, c.h_src);
    expect_copy(&c, 2, c.d_b, c.d_a);
    expect_copy(&c, 3, c.h_mid, c.d_b);
    expect_copy(&c, 4, c.h_dst, c.h_mid);
}

COURSE_TEST(a_failed_copy_is_returned_and_no_copy_follows_it, 2)
{
    for (size_t failing = 1; failing <= 4; failing++) {
        chain c = make_chain(false);
        trace_start(); /* a fresh trace and failure plan for each round */
        trace_stop();
        trace_inject_failure(TRACED_cudaMemcpy, failing, cudaErrorLaunchFailure);
        cudaError_t err = run_chain(&c);
        ck_assert_msg(err == cudaErrorLaunchFailure,
                      "the test made copy number %zu (%s) fail with cudaErrorLaunchFailure, but "
                      "copy_four_ways returned %s: check every return value and pass the error "
                      "on. The calls:%s",
                      failing, copy_names[failing - 1], error_text(err), trace_summary());
        ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == failing,
                      "copy number %zu (%s) failed, yet copy_four_ways went on to copy again: "
                      "what it would copy next never arrived, so stop at the first error. The "
                      "calls:%s",
                      failing, copy_names[failing - 1], trace_summary());
    }
}

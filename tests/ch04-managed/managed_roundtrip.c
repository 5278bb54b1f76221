/* managed_roundtrip.c - tests for exercises/ch04-managed/managed_roundtrip.c (managed_roundtrip).
 *
 * The learner's code runs in a process of its own, whose managed memory the test cannot read
 * (there is no IPC of managed memory): the results are judged where the learner's code puts
 * them, in h_out, host memory both processes see. The test holds each kernel up before it runs
 * (trace_delay_kernels), as a busy GPU would, so that a host that reads the managed buffer
 * without waiting reads its own input back, every time. The trace shows the rest: what memory
 * was allocated and how much, any copy call, the wait after the kernel, the free.
 *
 * A buffer from cudaMalloc is the one mistake the test must not let run: the host's write into
 * it crashes the program on a GPU (the address means nothing on the host; the stand-in runtime,
 * whose device memory is the host's, would let it pass). So every run makes cudaMalloc and
 * cudaMallocAsync fail, which code that uses managed memory never notices, and the failure is
 * explained from the trace.
 */
#include "harness.h"
#include "managed_roundtrip.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

COURSE_EXERCISE(
    "A round trip through one managed pointer",
    "Chapter 1's round trip with the copies taken away (section 4.1): one buffer from "
    "cudaMallocManaged, which the host and the GPU both use at the same address. Who writes the "
    "input into it, and when may the host read the results out? What of the buffer, on every "
    "path?\n\n"
    "float *m; cudaMallocManaged((void **)&m, n * sizeof(float), cudaMemAttachGlobal); then "
    "memcpy(m, h_in, n * sizeof(float)) on the host (no cudaMemcpy: the pages move by "
    "themselves); gpu_work_scale_add(0, m, m, n, a, b) queues the kernel and returns; "
    "cudaDeviceSynchronize() waits until it has run; memcpy(h_out, m, n * sizeof(float)); "
    "cudaFree(m), on the error paths too, and return the first error.");
COURSE_EXERCISE_WORK_QUEUES(1);

/* 1000 floats, 4000 bytes: within the one page where an allocation begins, so that code that
 * allocates n bytes for n floats writes past its allocation but not past that page, and the
 * test can name the mistake rather than see the program crash or write over other memory. */
enum { N = 1000 };
#define BYTES ((size_t)N * sizeof(float))
#define DELAY_MS 20.0                   /* how long the test holds each kernel up before it runs */
static const float A = 1.25f, B = 0.5f; /* a * x + b is never x for the test's inputs */

typedef struct roundtrip {
    float *h_in, *h_out;
} roundtrip;

static roundtrip make_roundtrip(void)
{
    roundtrip r;
    r.h_in = harness_host_alloc(BYTES); /* pageable: memory only the host can reach */
    fill_floats(r.h_in, N);
    r.h_out = harness_host_alloc(BYTES); /* poisoned */
    return r;
}

static cudaError_t run_managed_roundtrip(void *context)
{
    roundtrip *r = context;
    return managed_roundtrip(r->h_in, r->h_out, N, A, B);
}

/* Runs managed_roundtrip under the trace, its kernels held up, and cudaMalloc refused (above);
 * then, where it succeeded, waits for whatever it left queued, untraced. */
static cudaError_t run_delayed(roundtrip *r)
{
    trace_start();
    trace_stop();
    trace_delay_kernels(DELAY_MS);
    trace_inject_failure(TRACED_cudaMalloc, 1, cudaErrorMemoryAllocation);
    trace_inject_failure(TRACED_cudaMallocAsync, 1, cudaErrorMemoryAllocation);
    cudaError_t err;
    TRACED_RUN(err = run_managed_roundtrip(r));
    if (err == cudaSuccess) /* after an error the context may be lost: expect_success says why */
        harness_synchronize_untraced();
    return err;
}

/* Fails the test where the code asked for device memory, which the host cannot touch. */
static void expect_no_device_only_memory(void)
{
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_function function = trace_get(i)->function;
        if (function == TRACED_cudaMalloc || function == TRACED_cudaMallocAsync)
            ck_abort_msg("managed_roundtrip allocated its buffer with %s, device memory that only "
                         "the GPU can reach: the host's write of h_in into it would crash the "
                         "program (on a GPU, a segmentation fault), so the test made %s fail "
                         "instead. Allocate with cudaMallocManaged, whose one address both the "
                         "host and the GPU use. The calls:%s",
                         traced_function_name(function), traced_function_name(function),
                         trace_summary());
    }
}

/* The sentence that explains an allocation of the wrong size, "" when each is of n floats. */
static const char *size_note(void)
{
    static char note[512];
    note[0] = '\0';
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        if (call->function != TRACED_cudaMallocManaged || call->bytes == BYTES)
            continue;
        if (call->bytes == N)
            snprintf(note, sizeof note,
                     " cudaMallocManaged was asked for %zu bytes, the number of floats: "
                     "cudaMallocManaged's size is in bytes, so pass n * sizeof(float) = %zu. "
                     "The host and the kernel then wrote past the end of the allocation.",
                     call->bytes, BYTES);
        else if (call->bytes == sizeof(float *))
            snprintf(note, sizeof note,
                     " cudaMallocManaged was asked for %zu bytes, the size of a pointer: sizeof "
                     "applied to a pointer gives the pointer's size, not the buffer's. Pass "
                     "n * sizeof(float) = %zu.",
                     call->bytes, BYTES);
        else
            snprintf(note, sizeof note,
                     " cudaMallocManaged was asked for %zu bytes, where n floats are "
                     "n * sizeof(float) = %zu bytes.",
                     call->bytes, BYTES);
        break;
    }
    return note;
}

/* The sentence that explains a kernel given the wrong memory or count, "" when there is none. */
static const char *kernel_note(void)
{
    static char note[512];
    note[0] = '\0';
    const traced_call *kernel = trace_nth(TRACED_gpu_work_scale_add, 1);
    if (kernel == NULL)
        return note;
    if (kernel->dst_location == LOCATION_PAGEABLE_HOST ||
        kernel->src_location == LOCATION_PAGEABLE_HOST)
        snprintf(note, sizeof note,
                 " gpu_work_scale_add was given h_in or h_out, memory from malloc that the GPU "
                 "cannot reach (on a GPU, an illegal address that ends the context): give it "
                 "the managed buffer, into which the host wrote h_in.");
    else if (kernel->bytes != BYTES)
        snprintf(note, sizeof note,
                 " gpu_work_scale_add was asked for %zu floats, where there are n = %d: its "
                 "count is in elements, not bytes.",
                 kernel->bytes / sizeof(float), N);
    return note;
}

static void expect_success(cudaError_t err)
{
    expect_no_device_only_memory();
    ck_assert_msg(err == cudaSuccess,
                  "managed_roundtrip returned %s.%s%s The calls it made were:%s", error_text(err),
                  size_note(), kernel_note(), trace_summary());
}

COURSE_TEST(h_out_holds_a_times_x_plus_b_when_it_returns, 3)
{
    roundtrip r = make_roundtrip();
    expect_success(run_delayed(&r));
    if (memcmp(r.h_out, r.h_in, BYTES) == 0)
        ck_abort_msg("h_out holds h_in unchanged: the host read the managed buffer back before "
                     "the kernel had run. A launch only queues the kernel (the test held it up "
                     "%g ms, as a busy GPU would), and the host reads what the buffer held "
                     "before it: wait for the GPU with cudaDeviceSynchronize() (or "
                     "cudaStreamSynchronize of the kernel's stream) before reading the results. "
                     "The calls:%s",
                     DELAY_MS, trace_summary());
    ck_assert_msg(!holds_only_poison(r.h_out, BYTES),
                  "h_out still holds the test's poison: nothing was written into it. Read the "
                  "results out of the managed buffer into h_out, on the host. The calls:%s",
                  trace_summary());
    float *want = harness_private_alloc(BYTES);
    for (size_t i = 0; i < N; i++)
        want[i] = fmaf(A, r.h_in[i], B); /* as the kernel rounds it: once */
    expect_floats_arrived(r.h_out, want, N, "h_out, a * h_in + b");
}

/* Fails the test unless the kernel worked in place on (or between) managed buffers of n floats
 * that the code allocated, and was given n. */
static void expect_kernel_on_managed_memory(void)
{
    const traced_call *kernel = trace_nth(TRACED_gpu_work_scale_add, 1);
    ck_assert_msg(kernel != NULL,
                  "managed_roundtrip made no gpu_work_scale_add call: the GPU computed nothing. "
                  "The calls:%s",
                  trace_summary());
    const char *note = kernel_note();
    ck_assert_msg(note[0] == '\0', "%s The calls:%s", note + 1, trace_summary());
    ck_assert_msg(kernel->dst_location == LOCATION_MANAGED &&
                      kernel->src_location == LOCATION_MANAGED,
                  "gpu_work_scale_add worked from %s into %s: both are to be the managed buffer. "
                  "The calls:%s",
                  memory_location_name(kernel->src_location),
                  memory_location_name(kernel->dst_location), trace_summary());
}

COURSE_TEST(every_buffer_is_managed_memory_of_n_floats, 2)
{
    roundtrip r = make_roundtrip();
    expect_success(run_delayed(&r));
    size_t managed = 0;
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        if (call->result != cudaSuccess || traced_function_role(call->function) != ROLE_ACQUIRE)
            continue;
        const trace_resource resource = traced_function_resource(call->function);
        ck_assert_msg(resource != RESOURCE_PINNED_MEMORY && resource != RESOURCE_REGISTRATION,
                      "managed_roundtrip used %s (%s): the GPU reaches it across the link on "
                      "every access, as chapter 2's zero-copy does, and nothing moves. This "
                      "exercise is about managed memory, whose pages move to the side that "
                      "touches them: allocate with cudaMallocManaged. The calls:%s",
                      resource_words(resource), traced_function_name(call->function),
                      trace_summary());
        if (call->function != TRACED_cudaMallocManaged)
            continue;
        managed++;
        const char *note = size_note();
        ck_assert_msg(note[0] == '\0', "%s The calls:%s", note + 1, trace_summary());
    }
    ck_assert_msg(managed > 0,
                  "managed_roundtrip allocated no managed memory: call cudaMallocManaged. The "
                  "calls:%s",
                  trace_summary());
    expect_kernel_on_managed_memory();
}

COURSE_TEST(it_calls_no_cudaMemcpy, 1)
{
    roundtrip r = make_roundtrip();
    expect_success(run_delayed(&r));
    const size_t copies =
        trace_count_of(TRACED_cudaMemcpy) + trace_count_of(TRACED_cudaMemcpyAsync);
    ck_assert_msg(copies == 0,
                  "managed_roundtrip called cudaMemcpy%s %zu time%s. The host can write and read "
                  "managed memory itself (memcpy, or a loop), and the pages move to the side "
                  "that touches them: that is what managed memory is for. Write h_in into the "
                  "buffer on the host, and read the results out the same way. The calls:%s",
                  trace_count_of(TRACED_cudaMemcpyAsync) > 0 ? " or cudaMemcpyAsync" : "", copies,
                  copies == 1 ? "" : "s", trace_summary());
}

COURSE_TEST(it_waits_for_the_kernel_before_the_host_reads_the_results, 2)
{
    roundtrip r = make_roundtrip();
    expect_success(run_delayed(&r));
    const traced_call *kernel = trace_nth(TRACED_gpu_work_scale_add, 1);
    ck_assert_msg(kernel != NULL, "managed_roundtrip made no gpu_work_scale_add call. The calls:%s",
                  trace_summary());
    if (trace_wait_for_stream(kernel->stream, trace_position(kernel)) != NULL)
        return;
    for (size_t i = trace_position(kernel) + 1; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        if (call->function == TRACED_cudaStreamSynchronize && call->stream == NULL &&
            trace_stream_is_non_blocking(kernel->stream))
            ck_abort_msg("managed_roundtrip synchronised the legacy default stream (0), but its "
                         "kernel was on a stream created with cudaStreamNonBlocking, which the "
                         "default stream does not wait for. Synchronise the kernel's own stream, "
                         "or the device. The calls:%s",
                         trace_summary());
        if (call->function == TRACED_cudaStreamSynchronize)
            ck_abort_msg("managed_roundtrip synchronised another stream than its kernel's, which "
                         "does not wait for the kernel. The calls:%s",
                         trace_summary());
    }
    ck_abort_msg("managed_roundtrip made no wait for the GPU after its kernel: the launch returns "
                 "before the kernel has run, and the host that reads the buffer then reads what "
                 "was there before it (cudaFree waits, but too late: the results are gone with "
                 "the buffer). Call cudaDeviceSynchronize() after the launch, before reading the "
                 "results. The calls:%s",
                 trace_summary());
}

COURSE_TEST(the_managed_buffer_is_freed, 1)
{
    roundtrip r = make_roundtrip();
    expect_success(run_delayed(&r));
    expect_everything_released("managed_roundtrip");
}

COURSE_TEST(errors_are_returned_and_the_buffer_still_freed, 2)
{
    roundtrip r = make_roundtrip();
    expect_success(run_delayed(&r)); /* refuses cudaMalloc first: the runs below would not */
    expect_every_failure_handled("managed_roundtrip", run_managed_roundtrip, &r);
    harness_synchronize_untraced();
}
